package rawtp_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/provider/ktrace/ktracetest"
)

// TestForkArgs: rawtp:sched::sched_process_fork passes the parent and
// the child (struct task_struct *, from BTF): the test forks a process,
// and args[0]->pid and args[1]->pid are the test's and the child's.
func TestForkArgs(t *testing.T) {
	var child int
	out := ktracetest.Run(t, fmt.Sprintf(`
rawtp:sched::sched_process_fork /args[0]->tgid == %d/ { printf("%%d %%d\n", args[0]->tgid, args[1]->pid); }
`, os.Getpid()), 3*time.Second, func() {
		cmd := exec.Command("/bin/true")
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		child = cmd.Process.Pid
	})
	want := fmt.Sprintf("%d %d", os.Getpid(), child)
	if !strings.Contains(out, want+"\n") {
		t.Errorf("output %q lacks %q", out, want)
	}
}
