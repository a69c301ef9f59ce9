//go:build linux

package hardstop

import (
	"os"
	"os/exec"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// dtraceBin is the dtrace command built for these tests by TestMain.
var dtraceBin string

func TestMain(m *testing.M) {
	if os.Getuid() != 0 {
		// The tests skip themselves; nothing to build.
		os.Exit(m.Run())
	}
	os.Exit(testprog.MainCmd(m, "dtrace", &dtraceBin))
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root for BPF")
	}
}

// startDtrace starts dtrace with args, its output collected; the test
// kills it if it still runs when the test ends.
func startDtrace(t *testing.T, args ...string) *testprog.Running {
	t.Helper()
	return testprog.StartCmd(t, exec.Command(dtraceBin, args...))
}
