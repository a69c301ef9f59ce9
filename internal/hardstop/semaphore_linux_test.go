//go:build linux

package hardstop

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testprog"
	"github.com/dtrace-go/dtrace/symbol"
)

// semaphoreAddr returns the address of the test program's semaphore in
// process pid.
func semaphoreAddr(t *testing.T, pid int) int64 {
	t.Helper()
	proc, err := symbol.ReadProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, mod := range proc.Modules() {
		if !mod.IsExe {
			continue
		}
		obj, err := symbol.LoadObject(proc.OpenPath(mod))
		if err != nil {
			t.Fatal(err)
		}
		bias, ok := proc.Bias(mod, obj)
		v, found := obj.SymbolValue("myprov_guarded_semaphore")
		if !ok || !found {
			t.Fatalf("semaphore: bias %v, symbol %v", ok, found)
		}
		return int64(v + bias)
	}
	t.Fatal("no executable mapping")
	return 0
}

func peek(t *testing.T, pid int, addr int64) uint16 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [2]byte
	if _, err := f.ReadAt(b[:], addr); err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint16(b[:])
}

func poke(t *testing.T, pid int, addr int64, v uint16) {
	t.Helper()
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", pid), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [2]byte
	binary.LittleEndian.PutUint16(b[:], v)
	if _, err := f.WriteAt(b[:], addr); err != nil {
		t.Fatal(err)
	}
}

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
	addr := semaphoreAddr(t, pid)
	const old = 5
	poke(t, pid, addr, old)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		r := startDtrace(t, "-q", "-p", strconv.Itoa(pid), "-n", `BEGIN { printf("ready\n"); } myprov$target:::guarded { @ = count(); }`)
		r.waitLine(t, "ready", 2*time.Minute)
		if v := peek(t, pid, addr); v != old+1 {
			t.Errorf("%v: semaphore %d while tracing, want %d", sig, v, old+1)
		}
		r.cmd.Process.Signal(sig)
		code := r.wait(t, time.Minute)
		if sig != syscall.SIGKILL && code != 0 {
			t.Errorf("%v: exit %d; stderr %q", sig, code, r.errOut())
		}
		// Teardown after SIGKILL is the kernel's, a moment later.
		v := peek(t, pid, addr)
		for try := 0; try < 100 && v != old; try++ {
			time.Sleep(20 * time.Millisecond)
			v = peek(t, pid, addr)
		}
		if v != old {
			t.Errorf("%v: semaphore %d after dtrace exited, want %d", sig, v, old)
		}
	}
}
