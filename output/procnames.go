package output

import (
	"fmt"
	"os"
	"strings"
)

// ProcNames reads a thread's process and thread names from /proc, for
// renderers that name threads (a timeline's tracks); they are empty once
// it is gone.
func ProcNames(pid, tid int) (string, string) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return ""
		}
		return strings.TrimSuffix(string(b), "\n")
	}
	return read(fmt.Sprintf("/proc/%d/comm", pid)), read(fmt.Sprintf("/proc/%d/task/%d/comm", pid, tid))
}
