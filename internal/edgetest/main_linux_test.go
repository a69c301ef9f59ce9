//go:build linux

package edgetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
	return testprog.RunWithin(t, exec.Command(dtraceBin, args...), time.Duration(slow())*time.Minute)
}

// running is a dtrace process the test watches and signals.
type running struct {
	*testprog.Running
	readme readmeCommand // the README command it runs (TestReadme)
}

// start starts dtrace with args; the test kills it if it is still
// running when the test ends.
func start(t *testing.T, args ...string) *running {
	t.Helper()
	testprog.NeedRoot(t, "BPF")
	return &running{Running: testprog.StartCmd(t, exec.Command(dtraceBin, args...))}
}

func (r *running) output() (string, string) { return r.Stdout.String(), r.Stderr.String() }

// wait waits for dtrace to exit, at most timeout, and returns how long
// that took and its exit status.
func (r *running) wait(t *testing.T, timeout time.Duration) (time.Duration, int) {
	t.Helper()
	begin := time.Now()
	status := r.Wait(t, timeout)
	return time.Since(begin), status
}

// slowEnv names a factor by which TestGuest stretches the time bounds
// of TestSignalsUnderFlood: a guest runs on one emulation thread, 5-20
// times slower than this machine.
const slowEnv = "DTRACE_EDGES_SLOW"

// slow returns the factor slowEnv gives, 1 by default.
func slow() time.Duration {
	if n, err := strconv.Atoi(os.Getenv(slowEnv)); err == nil && n > 0 {
		return time.Duration(n)
	}
	return 1
}

// script writes a D script into the test's directory.
func script(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.d")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
