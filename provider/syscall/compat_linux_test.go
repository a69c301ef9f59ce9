package syscall_test

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/internal/testutil/tracetest"
	"github.com/dtrace-go/dtrace/provider"
	dtraceprov "github.com/dtrace-go/dtrace/provider/dtrace"
	"github.com/dtrace-go/dtrace/provider/syscall"
)

// TestCompatChoice checks that SetCompat makes the probes of a narrow
// description wide (their own tracepoints ignore 32-bit tasks) when the
// system call has an i386 number, and only then: mmap has none (32-bit
// programs call mmap2, mmap_pgoff).
func TestCompatChoice(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("system call numbers are known on amd64 only")
	}
	for _, compat := range []bool{false, true} {
		pv := syscall.New()
		pv.SetCompat(compat)
		reg := provider.NewRegistry(dtraceprov.New(), pv)
		// Numbers of their own (brk: 45), through a 32-bit time variant
		// (clock_nanosleep_time32: 267) or shared with x86-64 (clone3).
		for _, d := range []string{"syscall::brk:entry", "syscall::write:return", "syscall::clock_nanosleep:entry", "syscall::clone3:entry"} {
			ps, err := reg.MatchString(d)
			if err != nil || len(ps) != 1 {
				t.Fatalf("%s: %v %v", d, ps, err)
			}
			if wide := pv.ShareKey(ps[0]) != ""; wide != compat {
				t.Errorf("SetCompat(%v): %s wide = %v", compat, d, wide)
			}
		}
		ps, err := reg.MatchString("syscall::mmap:entry")
		if err != nil || len(ps) != 1 {
			t.Fatalf("syscall::mmap:entry: %v %v", ps, err)
		}
		if pv.ShareKey(ps[0]) != "" {
			t.Errorf("SetCompat(%v): syscall::mmap:entry wide", compat)
		}
	}
}

// TestCompat traces a 32-bit process (gcc -m32), as dtrace -c does one:
// its system calls, made with i386 numbers, fire the probes of their
// names, narrow descriptions and wide ones alike, with their 32-bit
// arguments (fd -1 is 0xffffffff, as (int) -1) and return values.
func TestCompat(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("system call numbers are known on amd64 only")
	}
	if exec.Command("sh", "-c", "echo 'int main(void) { return 0; }' | gcc -m32 -x c -o /dev/null -").Run() != nil {
		t.Skip("gcc -m32 cannot build a program here")
	}
	exe := testprog.BuildSource(t, "w32", workload, "-O0", "-m32")
	want := "write 3 5 -> 5 0\nwrite -1 1 -> -9 9\n100 getppid"
	for _, probes := range []string{"syscall::write:", "syscall:::"} {
		p := testprog.Start(t, exe, "100")
		out := tracetest.Trace(t, p.Pid(), `#pragma D option quiet
`+probes+`entry /pid == $target && probefunc == "write"/ { printf("write %d %d -> ", (int)arg0, arg2); }
`+probes+`return /pid == $target && probefunc == "write"/ { printf("%d %d\n", arg1, errno); }
syscall::getppid:entry /pid == $target/ { n++; }
END { printf("%d getppid\n", n); }`, func() { p.Release(t) })
		out = strings.TrimRight(out, "\n")
		if out != want {
			t.Errorf("%s probes of a 32-bit process: got\n%s\nwant\n%s", probes, out, want)
		}
	}
}
