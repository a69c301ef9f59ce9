package sched_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/provider/ktrace/ktracetest"
)

// TestBusyChild follows a shell that blocks on its input, is woken by it,
// sleeps, then spins: it must go on and off CPU as often as other threads
// are switched away for it, be woken, queued on a CPU that exists, and
// sleep, each dequeue with DEQUEUE_SLEEP.
func TestBusyChild(t *testing.T) {
	pid, goOn := ktracetest.Start(t, "/bin/sh", "-c", "read x; sleep 0.1; i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done")
	out := ktracetest.Run(t, fmt.Sprintf(`
sched:::on-cpu /pid == %[1]d/ { on++; }
sched:::off-cpu /args[1]->pr_pid == %[1]d && args[0]->pr_lwpid == %[1]d/ { to++; }
sched:::wakeup /args[1]->pr_pid == %[1]d/ { woken++; }
sched:::enqueue /args[1]->pr_pid == %[1]d && args[2]->cpu_id >= 0 && args[2]->cpu_id < %[2]d/ { queued++; }
sched:::sleep /pid == %[1]d/ { slept++; }
sched:::dequeue /args[1]->pr_pid == %[1]d && args[3] == 1/ { dequeued++; }
proc:::exit /pid == %[1]d/ { printf("%%d %%d %%d %%d %%d %%d\n", on, to, woken, queued, slept, dequeued); exit(0); }
`, pid, runtime.NumCPU()), 20*time.Second, goOn)
	f := strings.Fields(out)
	if len(f) != 6 {
		t.Fatalf("output %q", out)
	}
	n := make([]int, 6)
	for i := range f {
		n[i], _ = strconv.Atoi(f[i])
	}
	on, to, woken, queued, slept, dequeued := n[0], n[1], n[2], n[3], n[4], n[5]
	t.Logf("on-cpu %d, off-cpu to it %d, wakeup %d, enqueue %d, sleep %d, dequeue %d", on, to, woken, queued, slept, dequeued)
	// Every switch to the thread ends in on-cpu in it. The counts are
	// not exact: a switch in flight when tracing starts or stops, and
	// under load the kernel skips a BPF program that would run nested in
	// itself on a CPU.
	if on < 2 || abs(to-on) > 3+to/5 {
		t.Errorf("on-cpu %d times, switched to %d times", on, to)
	}
	if woken < 1 || queued < 1 || slept < 1 || dequeued < slept {
		t.Errorf("wakeup %d, enqueue %d, sleep %d, dequeue %d times", woken, queued, slept, dequeued)
	}
}

// TestTick: the clock tick fires on every CPU about HZ times a second.
func TestTick(t *testing.T) {
	// An idle CPU takes no ticks (NO_HZ): keep one busy, so that at
	// least one CPU ticks HZ times a second whatever the machine's load.
	var stop atomic.Bool
	defer stop.Store(true)
	go func() {
		for !stop.Load() {
		}
	}()
	out := ktracetest.Run(t, `
sched:::tick { @ticks = count(); }
sched:::tick /args[0]->pr_lwpid == tid && args[1]->pr_pid == pid/ { @same = count(); }
tick-1s /n++ == 1/ { printa("%@d ", @ticks); printa("%@d\n", @same); exit(0); }
`, 10*time.Second, nil)
	var ticks, same int
	if _, err := fmt.Sscan(out, &ticks, &same); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	// CONFIG_HZ is at least 100; an idle CPU may skip ticks (NO_HZ).
	if ticks < 50 || same != ticks {
		t.Errorf("%d ticks in a second or more, %d naming the interrupted thread", ticks, same)
	}
}

// TestSurrender: a pipeline whose two ends wake each other makes CPUs
// tell each other to reschedule; each surrender names a thread on
// another CPU than the one that fires it.
func TestSurrender(t *testing.T) {
	out := ktracetest.Run(t, `
sched:::surrender { @all = count(); }
sched:::surrender /args[0]->pr_onpro != cpu/ { @other = count(); }
proc:::exit /execname == "head"/ { done = 1; }
tick-100ms /done/ { printa("%@d ", @all); printa("%@d\n", @other); exit(0); }
`, 20*time.Second, func() {
		if err := exec.Command("/bin/sh", "-c", "yes | head -c 20000000 > /dev/null").Run(); err != nil {
			t.Error(err)
		}
	})
	var all, other int
	if _, err := fmt.Sscan(out, &all, &other); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if all == 0 || other != all {
		t.Errorf("%d surrenders, %d naming a thread on another CPU", all, other)
	}
}

// TestPreempt: more spinning processes than CPUs must be preempted, and
// each preempted thread goes off CPU right after (off-cpu fires in it).
func TestPreempt(t *testing.T) {
	// Four times as many busy shells as CPUs; whether the scheduler
	// preempts one within the run is up to it (on an idle machine some
	// runs saw none), so the run is tried up to three times.
	n := 4 * runtime.NumCPU()
	var preempt, off int
	for try := 0; try < 3 && preempt == 0; try++ {
		out := ktracetest.Run(t, fmt.Sprintf(`
sched:::preempt /ppid == %[1]d/ { self->preempted = 1; @preempt = count(); }
sched:::off-cpu /self->preempted/ { self->preempted = 0; @off = count(); }
tick-100ms /++ticks == 15/ { printa("%%@d ", @preempt); printa("%%@d\n", @off); exit(0); }
`, os.Getpid()), 20*time.Second, func() {
			var cmds []*exec.Cmd
			for i := 0; i < n; i++ {
				cmd := exec.Command("/bin/sh", "-c", "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done")
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				cmds = append(cmds, cmd)
			}
			for _, cmd := range cmds {
				cmd.Wait()
			}
		})
		if strings.TrimSpace(out) == "" {
			continue // no preemption this time
		}
		if _, err := fmt.Sscan(out, &preempt, &off); err != nil {
			t.Fatalf("output %q: %v", out, err)
		}
	}
	t.Logf("%d preemptions, %d followed by off-cpu", preempt, off)
	// A preemption may find nothing better to run (remain-cpu): most go
	// off CPU.
	if preempt == 0 || off == 0 || off > preempt {
		t.Errorf("%d preemptions, %d followed by off-cpu", preempt, off)
	}
}

// piProgram holds a priority-inheritance mutex that a SCHED_FIFO thread
// (priority 10) then waits for: the holder is boosted to the waiter's
// priority, and falls back to its own when it unlocks.
const piProgram = `
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

static pthread_mutex_t m;

static void *high(void *arg)
{
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	return arg;
}

int main(void)
{
	char buf[8];
	pthread_mutexattr_t ma;
	pthread_attr_t ta;
	struct sched_param sp = { .sched_priority = 10 };
	pthread_t t;

	if (read(0, buf, sizeof buf) <= 0)
		return 1;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&m, &ma);
	pthread_mutex_lock(&m);
	pthread_attr_init(&ta);
	pthread_attr_setinheritsched(&ta, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&ta, SCHED_FIFO);
	pthread_attr_setschedparam(&ta, &sp);
	if (pthread_create(&t, &ta, high, NULL) != 0)
		return 2;
	usleep(200000);
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	return 0;
}
`

// TestChangePri: the holder of a PI mutex changes priority twice: to the
// SCHED_FIFO waiter's (kernel priority 99 - 10 = 89) and back to its
// normal one (120 for nice 0).
func TestChangePri(t *testing.T) {
	bin := testprog.BuildSource(t, "pi", piProgram, "-pthread")
	cmd := exec.Command(bin)
	goOn := ktracetest.Waiting(t, cmd)
	pid := cmd.Process.Pid
	out := ktracetest.Run(t, fmt.Sprintf(`
sched:::change-pri /args[1]->pr_pid == %[1]d/ { printf("lwp=%%d pri=%%d new=%%d\n", args[0]->pr_lwpid, args[0]->pr_pri, args[2]); }
proc:::exit /pid == %[1]d/ { done = 1; }
tick-100ms /done/ { exit(0); }
`, pid), 10*time.Second, goOn)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pi program: %v", err)
	}
	want := fmt.Sprintf("lwp=%[1]d pri=120 new=89\nlwp=%[1]d pri=89 new=120", pid)
	if strings.TrimSpace(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// TestDequeueStates: a process that sleeps and then exits leaves the run
// queue asleep (S) and, last, dead (Z).
func TestDequeueStates(t *testing.T) {
	pid, goOn := ktracetest.Start(t, "/bin/sh", "-c", "read x; sleep 0.2")
	out := ktracetest.Run(t, fmt.Sprintf(`
sched:::dequeue /args[1]->pr_pid == %[1]d/ { last = args[0]->pr_sname; @[args[0]->pr_sname] = count(); }
proc:::exit /pid == %[1]d/ { done = 1; }
tick-100ms /done && ++n == 3/ { printf("last %%c\n", last); printa("%%c\n", @); exit(0); }
`, pid), 10*time.Second, goOn)
	t.Logf("%q", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 || lines[0] != "last Z" {
		t.Fatalf("output %q, want the last dequeue dead", out)
	}
	states := strings.Join(lines[1:], "")
	if !strings.Contains(states, "S") || !strings.Contains(states, "Z") {
		t.Errorf("dequeue states %q, want S and Z", states)
	}
}
