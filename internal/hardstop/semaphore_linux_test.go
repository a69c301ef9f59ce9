//go:build linux

package hardstop

import (
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// TestSemaphoreRestored traces a semaphore-guarded USDT probe of a
// running process with dtrace -p and ends dtrace with SIGINT, SIGTERM and
// SIGKILL: while dtrace traces, the semaphore is one more than it was
// (the program had set it to 5 itself, so a tracer that wrote 1 and 0
// would be caught); once dtrace is gone, it is back to 5. The kernel
// counts the semaphore (it is the uprobes' ref_ctr_offset, raised when a
// uprobe is registered and lowered when it goes), so it is undone even
// when dtrace is SIGKILLed: the kernel closes the dead process's uprobe
// links and perf events.
func TestSemaphoreRestored(t *testing.T) {
	needRoot(t)
	prog := testprog.BuildUSDT(t, "-O2")
	pid := testprog.Start(t, prog, "3").Pid()
	addr := testprog.SemaphoreAddr(t, pid)
	const old = 5
	testprog.Poke(t, pid, addr, old)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		r := startDtrace(t, "-q", "-p", strconv.Itoa(pid), "-n", `BEGIN { printf("ready\n"); } myprov$target:::guarded { @ = count(); }`)
		r.WaitLine(t, "ready", 2*time.Minute)
		if v := testprog.Peek(t, pid, addr); v != old+1 {
			t.Errorf("%v: semaphore %d while tracing, want %d", sig, v, old+1)
		}
		r.Cmd.Process.Signal(sig)
		code := r.Wait(t, time.Minute)
		if sig != syscall.SIGKILL && code != 0 {
			t.Errorf("%v: exit %d; stderr %q", sig, code, r.Stderr.String())
		}
		// Teardown after SIGKILL is the kernel's, a moment later.
		v := testprog.Peek(t, pid, addr)
		for try := 0; try < 100 && v != old; try++ {
			time.Sleep(20 * time.Millisecond)
			v = testprog.Peek(t, pid, addr)
		}
		if v != old {
			t.Errorf("%v: semaphore %d after dtrace exited, want %d", sig, v, old)
		}
	}
}
