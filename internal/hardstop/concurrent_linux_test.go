//go:build linux

package hardstop

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// TestConcurrentConsumers attaches 8 dtrace processes to one process that
// then calls getppid N times: each consumer counts exactly N system
// calls and exactly N calls of libc's getppid, whatever the others do.
func TestConcurrentConsumers(t *testing.T) {
	needRoot(t)
	const consumers, n = 8, 5000
	prog := testprog.Build(t, "getppid", []string{"getppid.c"}, "-O2")
	w := testprog.Start(t, prog, strconv.Itoa(n))
	pid := strconv.Itoa(w.Pid())
	script := `BEGIN { printf("ready\n"); }
syscall::getppid:entry /pid == $target/ { @s = count(); }
pid$target:libc.so.6:getppid:entry { @p = count(); }
END { printa("syscall %@d\n", @s); printa("pid %@d\n", @p); }`
	runs := make([]*testprog.Running, consumers)
	for i := range runs {
		runs[i] = startDtrace(t, "-q", "-p", pid, "-n", script)
	}
	for _, r := range runs {
		r.WaitLine(t, "ready", 2*time.Minute)
	}
	w.Release(t)
	re := regexp.MustCompile(`(?m)^(syscall|pid) (\d+)$`)
	for i, r := range runs {
		if code := r.Wait(t, time.Minute); code != 0 {
			t.Errorf("consumer %d: exit %d; stderr %q", i, code, r.Stderr.String())
		}
		got := map[string]string{}
		for _, m := range re.FindAllStringSubmatch(r.Stdout.String(), -1) {
			got[m[1]] = m[2]
		}
		for _, k := range []string{"syscall", "pid"} {
			if got[k] != fmt.Sprint(n) {
				t.Errorf("consumer %d: %s count %q, want %d; stdout %q, stderr %q", i, k, got[k], n, r.Stdout.String(), r.Stderr.String())
			}
		}
	}
}
