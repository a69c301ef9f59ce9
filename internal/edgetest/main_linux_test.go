//go:build linux

package edgetest

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// binEnv names the dtrace binary to test instead of building one: a
// guest (TestGuest) has no build cache, and building there takes long.
const binEnv = "DTRACE_EDGES_BIN"

// dtraceBin is the dtrace command the tests run.
var dtraceBin string

func TestMain(m *testing.M) {
	if dtraceBin = os.Getenv(binEnv); dtraceBin != "" || os.Getuid() != 0 {
		// Given, or the tests skip themselves: nothing to build.
		os.Exit(m.Run())
	}
	os.Exit(testprog.MainCmd(m, "dtrace", &dtraceBin))
}

// dtrace runs the dtrace command with args (killed after a minute, times
// the slowEnv factor in a guest) and returns its standard output,
// standard error and exit status.
func dtrace(t *testing.T, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	testprog.NeedRoot(t, "BPF")
	cmd := exec.Command(dtraceBin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	status = testprog.ExitStatusWithin(t, cmd, time.Duration(slow())*time.Minute)
	return o.String(), e.String(), status
}
