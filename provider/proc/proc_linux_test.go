package proc_test

import (
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/provider/ktrace/ktracetest"
)

// waiting starts sh -c script with a pipe on its standard input; script
// begins with `read x`, so it waits until go is called.
func waiting(t *testing.T, script string) (cmd *exec.Cmd, goOn func()) {
	t.Helper()
	cmd = exec.Command("/bin/sh", "-c", "read x; "+script)
	return cmd, ktracetest.Waiting(t, cmd)
}

// TestProcessLife follows a shell that forks a child and then execs: the
// fork (create, start), both execs and the exit with its reason.
func TestProcessLife(t *testing.T) {
	cmd, goOn := waiting(t, "/bin/true; exec /bin/true")
	pid := cmd.Process.Pid
	out := ktracetest.Run(t, fmt.Sprintf(`
proc:::create /pid == %[1]d/ { printf("create ppid=%%d child=%%d\n", args[0]->pr_ppid, args[0]->pr_pid != %[1]d); }
proc:::start /ppid == %[1]d/ { printf("start\n"); }
proc:::exec /pid == %[1]d/ { printf("exec %%s\n", args[0]); }
proc:::exec-success /pid == %[1]d/ { printf("success %%s\n", execname); }
proc:::exit /pid == %[1]d/ { printf("exit %%d\n", args[0]); exit(0); }
`, pid), 10*time.Second, goOn)
	want := []string{
		fmt.Sprintf("create ppid=%d child=1", pid),
		"start",
		"exec /bin/true",
		"success true",
		"exit 1", // CLD_EXITED
	}
	// The records come from per-CPU buffers: compare them sorted.
	sort.Strings(want)
	if got := ktracetest.SortedLines(out); got != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", out, strings.Join(want, "\n"))
	}
}

// TestExecFailure: an exec of a file that does not exist fires exec with
// its path, then exec-failure with -ENOENT (dtrace-utils' args[0]).
func TestExecFailure(t *testing.T) {
	cmd, goOn := waiting(t, "exec /nonexistent/program")
	pid := cmd.Process.Pid
	out := ktracetest.Run(t, fmt.Sprintf(`
proc:::exec /pid == %[1]d/ { printf("exec %%s\n", args[0]); }
proc:::exec-failure /pid == %[1]d/ { printf("failure %%d\n", args[0]); }
proc:::exec-success /pid == %[1]d/ { printf("success\n"); }
proc:::exit /pid == %[1]d/ { printf("exit %%d\n", args[0]); exit(0); }
`, pid), 10*time.Second, goOn)
	if want := "exec /nonexistent/program\nfailure -2\nexit 1"; strings.TrimSpace(out) != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

// TestSignals sends SIGUSR2 to a sleeping process, whose default action
// kills it: signal-send names the target and the signal, signal-handle
// fires in the target with that signal (which the kernel delivers as
// SIGKILL) and the default handler, and exit says killed.
func TestSignals(t *testing.T) {
	cmd := exec.Command("/bin/sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	out := ktracetest.Run(t, fmt.Sprintf(`
proc:::signal-send /args[1]->pr_pid == %[1]d/ { printf("send lwp=%%d sig=%%d fname=%%s\n", args[0]->pr_lwpid, args[2], args[1]->pr_fname); }
proc:::signal-handle /pid == %[1]d/ { printf("handle sig=%%d handler=%%d\n", args[0], (uint64_t)args[2]); }
proc:::exit /pid == %[1]d/ { printf("exit %%d\n", args[0]); exit(0); }
`, pid), 10*time.Second, func() { cmd.Process.Signal(syscall.SIGUSR2) })
	// The records come from per-CPU buffers: sort them.
	got := ktracetest.SortedLines(out)
	want := fmt.Sprintf("exit 2\nhandle sig=12 handler=0\nsend lwp=%d sig=12 fname=sleep", pid)
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestListing: dtrace -l lists the probes, -lv their translated types.
func TestListing(t *testing.T) {
	out := ktracetest.List(t, "-l", "-P", "proc")
	for _, name := range []string{"create", "exec", "exec-failure", "exec-success", "exit", "lwp-create", "lwp-exit",
		"lwp-start", "signal-clear", "signal-discard", "signal-handle", "signal-send", "start"} {
		if !strings.Contains(out, " vmlinux ") || !strings.Contains(out, " "+name+"\n") {
			t.Errorf("dtrace -l -P proc lacks %s:\n%s", name, out)
		}
	}
	if out := ktracetest.List(t, "-lv", "-n", "proc:::create"); !strings.Contains(out, "args[0]: psinfo_t *") {
		t.Errorf("dtrace -lv -n proc:::create:\n%s", out)
	}
}

// threadProgram waits for a line on its input, then starts a thread that
// returns at once, joins it and exits.
const threadProgram = `
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *run(void *arg) { return arg; }

int main(void)
{
	char buf[8];
	pthread_t t;

	if (read(0, buf, sizeof buf) <= 0)
		return 1;
	pthread_create(&t, NULL, run, NULL);
	pthread_join(t, NULL);
	return 0;
}
`

// TestThreads: a process that starts a thread sees lwp-create in the
// creating thread (naming the new one), lwp-start in the new thread, an
// lwp-exit for each of its two threads and one exit. (It ends tracing
// from a later tick: exit() stops the clauses of probes that fire after
// it, and the main thread's lwp-exit runs after its exit.)
func TestThreads(t *testing.T) {
	bin := testprog.BuildSource(t, "thread", threadProgram, "-pthread")
	pid, goOn := ktracetest.Start(t, bin)
	out := ktracetest.Run(t, fmt.Sprintf(`
proc:::lwp-create /pid == %[1]d/ { printf("lwp-create new=%%d same=%%d creator=%%d\n", args[0]->pr_lwpid != tid, args[1]->pr_pid == pid, tid == %[1]d); }
proc:::lwp-start /pid == %[1]d/ { printf("lwp-start main=%%d\n", tid == pid); }
proc:::start /pid == %[1]d/ { printf("start\n"); }
proc:::create /pid == %[1]d/ { printf("create\n"); }
proc:::lwp-exit /pid == %[1]d/ { printf("lwp-exit\n"); }
proc:::exit /pid == %[1]d/ { printf("exit %%d\n", args[0]); done = 1; }
tick-100ms /done/ { exit(0); }
`, pid), 10*time.Second, goOn)
	got := ktracetest.SortedLines(out)
	want := []string{"exit 1", "lwp-create new=1 same=1 creator=1", "lwp-exit", "lwp-exit", "lwp-start main=0"}
	if got != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}

// sigwaitProgram blocks SIGUSR1, says it is ready and takes the signal
// with sigwait().
const sigwaitProgram = `
#include <signal.h>
#include <stdio.h>

int main(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready\n");
	fflush(stdout);
	if (sigwait(&set, &sig) != 0)
		return 1;
	return sig == SIGUSR1 ? 0 : 2;
}
`

// TestSignalClearAndDiscard: SIGURG, ignored by default, is discarded
// (signal-send fires too); SIGUSR1, blocked and taken by sigwait(), is
// cleared.
func TestSignalClearAndDiscard(t *testing.T) {
	bin := testprog.BuildSource(t, "sigwait", sigwaitProgram)
	cmd := exec.Command(bin)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	ready := make([]byte, 6)
	if _, err := io.ReadFull(stdout, ready); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	out := ktracetest.Run(t, fmt.Sprintf(`
proc:::signal-send /args[1]->pr_pid == %[1]d/ { printf("send %%d\n", args[2]); }
proc:::signal-discard /args[1]->pr_pid == %[1]d/ { printf("discard %%d %%d\n", args[2], args[0]->pr_lwpid == %[1]d); }
proc:::signal-clear /pid == %[1]d/ { printf("clear %%d\n", args[0]); }
proc:::exit /pid == %[1]d/ { printf("exit %%d\n", args[0]); exit(0); }
`, pid), 10*time.Second, func() {
		cmd.Process.Signal(syscall.SIGURG)
		time.Sleep(100 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGUSR1)
	})
	got := ktracetest.SortedLines(out)
	want := []string{"clear 10", "discard 23 1", "exit 1", "send 10", "send 23"}
	if got != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}
