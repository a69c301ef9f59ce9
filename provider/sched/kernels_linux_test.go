package sched_test

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/guesttest"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/provider/ktrace/ktracetest"
)

// guestEnv marks a run of TestSchedProbes in a guest (TestSchedGuests).
const guestEnv = "SCHED_GUEST"

// spin is a shell loop that keeps a CPU busy for a while.
const spin = "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"

// TestSchedProbes: a shell that blocks on its input, sleeps, then runs
// two busy loops on one CPU fires on-cpu, off-cpu, preempt, enqueue,
// dequeue, sleep and wakeup for its threads, on whatever each kernel runs
// them on (TestSchedGuests: 6.12 and 6.1, which lack the bare tracepoints
// 6.18 has).
func TestSchedProbes(t *testing.T) {
	pid, goOn := ktracetest.Start(t, "/bin/sh", "-c",
		"read x; sleep 0.1; taskset -c 0 sh -c '"+spin+"' & taskset -c 0 sh -c '"+spin+"'; wait")
	out := ktracetest.Run(t, fmt.Sprintf(`
sched:::on-cpu /progenyof(%[1]d)/ { @["on-cpu"] = count(); }
sched:::off-cpu /progenyof(%[1]d)/ { @["off-cpu"] = count(); }
sched:::preempt /progenyof(%[1]d)/ { @["preempt"] = count(); }
sched:::sleep /progenyof(%[1]d)/ { @["sleep"] = count(); }
sched:::dequeue /args[1]->pr_pid == %[1]d/ { @["dequeue"] = count(); }
sched:::enqueue /args[1]->pr_pid == %[1]d/ { @["enqueue"] = count(); }
sched:::wakeup /args[1]->pr_pid == %[1]d/ { @["wakeup"] = count(); }
proc:::exit /pid == %[1]d/ { printa("%%s %%@d\n", @); exit(0); }
`, pid), 120*time.Second, goOn)
	t.Logf("output:\n%s", out)
	got := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^(\S+) (\d+)$`).FindAllStringSubmatch(out, -1) {
		got[m[1]], _ = strconv.Atoi(m[2])
	}
	for _, p := range []string{"on-cpu", "off-cpu", "preempt", "enqueue", "dequeue", "sleep", "wakeup"} {
		if got[p] == 0 {
			t.Errorf("sched:::%s did not fire", p)
		}
	}
}

// TestSchedGuests runs TestSchedProbes in Debian's 6.12 and 6.1 kernels.
func TestSchedGuests(t *testing.T) {
	dir := guesttest.Host(t, guestEnv, ".guest-sched-")
	env := []string{guestEnv + "=1", ktracetest.BinaryEnv + "=" + testprog.BuildCmd(t, dir, "dtrace")}
	guesttest.RunTests(t, dir, env, "TestSchedProbes", "-t", "900", "-c", "2")
}
