package sdt_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/provider/ktrace/ktracetest"
)

// setName renames the calling thread (prctl PR_SET_NAME) and returns its
// old name.
func setName(t *testing.T, name string) string {
	old := make([]byte, 16)
	if err := unix.Prctl(unix.PR_GET_NAME, uintptr(unsafe.Pointer(&old[0])), 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	b := append([]byte(name), 0)
	if err := unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	return strings.TrimRight(string(old), "\x00")
}

// TestTaskRename renames a thread of the test: sdt:task::task_rename
// passes its thread id, the old and new names (arrays in the record, read
// through their address) and its oom_score_adj.
func TestTaskRename(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	var old string
	out := ktracetest.Run(t, fmt.Sprintf(`
sdt:task::task_rename /args[0] == %d/
{
	printf("%%d [%%s] [%%s] %%hd\n", args[0], stringof(args[1]), stringof(args[2]), args[3]);
	exit(0);
}
`, tid), 10*time.Second, func() {
		old = setName(t, "sdt-renamed")
		setName(t, old)
	})
	want := fmt.Sprintf("%d [%s] [sdt-renamed] 0\n", tid, old)
	if strings.TrimRight(out, "\n")+"\n" != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

// TestList: the events of tracefs are listed as sdt:GROUP::EVENT, with
// the types of their fields; the syscalls group is the syscall provider's.
func TestList(t *testing.T) {
	out := ktracetest.List(t, "-lv", "-n", "sdt:sched::sched_switch")
	for _, s := range []string{"sdt             sched                                   sched_switch\n",
		"args[0]: char *", "args[1]: pid_t"} {
		if !strings.Contains(out, s) {
			t.Errorf("dtrace -lv -n sdt:sched::sched_switch lacks %q:\n%s", s, out)
		}
	}
	// The listing fails (no probe matches) or lists no syscall.
	syscalls, _ := testprog.Output(t, ktracetest.Dtrace(t), "-l", "-n", "sdt:syscalls::")
	if strings.Contains(syscalls, "sys_enter") {
		t.Errorf("sdt lists the syscalls group:\n%s", syscalls)
	}
}
