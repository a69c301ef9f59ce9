// Package guesttest holds what the tests that boot another kernel with
// ../shared/vm/run-kernel share (internal/kerneltest, internal/kvartest,
// provider/fbt): finding run-kernel, a directory the guest can see (for
// binaries that testprog.BuildIn and testprog.BuildCmd build), and
// running a command in the guest, skipping when run-kernel has no kernel
// package to boot.
package guesttest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Root returns the module's root, from this file's place in it.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// RunKernel returns the path of ../shared/vm/run-kernel beside the module,
// and skips the test when it is not there.
func RunKernel(t testing.TB) string {
	t.Helper()
	rk := filepath.Join(Root(), "..", "shared", "vm", "run-kernel")
	if _, err := os.Stat(rk); err != nil {
		t.Skip("no run-kernel:", err)
	}
	return rk
}

// Kernel61 is the Debian package of Debian 12's own kernel, which
// run-kernel boots with -k; without it, run-kernel boots Debian's 6.12.
const Kernel61 = "linux-image-6.1.0-56-amd64-unsigned"

// Kernel is a kernel a guest boots: its name and the run-kernel options
// that choose it.
type Kernel struct {
	Name string
	Opts []string
}

// Kernels are the kernels we serve besides this machine's: 6.12 and 6.1.
var Kernels = []Kernel{{"6.12", nil}, {"6.1", []string{"-k", Kernel61}}}

// Host starts a test that runs part of itself in guests: it skips the
// test inside the guest (where the environment variable env is set),
// where run-kernel is missing and where it cannot run (not root), and
// returns a directory from Dir(prefix) for what the guests run.
func Host(t testing.TB, env, prefix string) string {
	t.Helper()
	if os.Getenv(env) != "" {
		t.Skip("inside the guest")
	}
	RunKernel(t)
	if os.Geteuid() != 0 {
		t.Skip("run-kernel needs root")
	}
	return Dir(t, prefix)
}

// Dir makes a directory named prefix* under the current one and returns
// its absolute path: the guest sees this machine's files but has its own
// /tmp, so binaries it runs go here. The test removes it when it ends.
func Dir(t testing.TB, prefix string) string {
	t.Helper()
	d, err := os.MkdirTemp(".", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	abs, err := filepath.Abs(d)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// Script writes text as the shell script name in dir (from Dir) and
// returns its path.
func Script(t testing.TB, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Run runs run-kernel with args (its options, then the shell command) in
// the current directory, which the guest sees read-write, and returns
// the combined output. It skips the test when run-kernel has no kernel
// package (exit status 125 with its message to that effect), boots again
// (twice at most) a guest whose kernel panicked before it ran the
// command (BootFailed), and logs how long the guest ran.
func Run(t testing.TB, args ...string) ([]byte, error) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		start := time.Now()
		out, err := exec.Command(RunKernel(t), args...).CombinedOutput()
		t.Logf("guest ran in %v", time.Since(start).Round(time.Second))
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 125 &&
			(bytes.Contains(out, []byte("kernel package found")) || bytes.Contains(out, []byte("cannot download"))) {
			t.Skipf("no kernel package for run-kernel: %s", out)
		}
		if attempt < 3 && BootFailed(err, out) {
			t.Logf("the guest's kernel panicked before it ran the command; booting again:\n%s", out)
			continue
		}
		return out, err
	}
}

// BootFailed reports whether run-kernel ended with err and output out
// because the emulated machine's kernel panicked while it booted, before
// it ran the command: under QEMU's emulation on a loaded host, Linux's
// check of the timer interrupt at boot can fail ("IO-APIC + timer
// doesn't work!"). Nothing of the test ran; another boot is the remedy,
// as it would be on real hardware that failed to boot.
func BootFailed(err error, out []byte) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == 125 &&
		bytes.Contains(out, []byte("the guest did not run the command")) &&
		bytes.Contains(out, []byte("Kernel panic"))
}

// Self copies the running test binary into dir as name and returns its
// path, for a test that runs part of itself in the guest (selected by an
// environment variable).
func Self(t testing.TB, dir, name string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(dir, name)
	if err := os.WriteFile(self, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return self
}

// RunTest runs the test name of this test binary (copied into dir, from
// Dir, by Self) in a guest booted with run-kernel's options opts, with
// the environment assignments env (NAME=value) and, under -short,
// -test.short. The test fails unless name passes in the guest.
func RunTest(t testing.TB, dir string, env []string, name string, opts ...string) {
	t.Helper()
	self := Self(t, dir, "guest.test")
	// run-kernel's -t bounds the guest; Go's default 10 minutes would
	// cut a long guest run short.
	command := strings.Join(env, " ") + " " + self + " -test.v -test.timeout 40m -test.run '^" + name + "$'"
	if testing.Short() {
		command += " -test.short"
	}
	out, err := Run(t, append(opts, command)...)
	t.Logf("guest:\n%s", out)
	if err != nil {
		t.Fatalf("guest: %v", err)
	}
	if !bytes.Contains(out, []byte("--- PASS: "+name+" ")) {
		t.Fatalf("%s did not pass in the guest", name)
	}
}

// RunTests runs the test name (RunTest) in a guest of each of Kernels,
// as subtests named for the kernels, with run-kernel's options opts.
func RunTests(t *testing.T, dir string, env []string, name string, opts ...string) {
	t.Helper()
	for _, k := range Kernels {
		t.Run(k.Name, func(t *testing.T) {
			RunTest(t, dir, env, name, append(append([]string{}, opts...), k.Opts...)...)
		})
	}
}

var summary = regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed$`)

// Passed returns how many tests dtconform's summary line in out ("N
// passed, M failed") counts as passed; output without one fails the
// test.
func Passed(t testing.TB, out []byte) int {
	t.Helper()
	m := summary.FindSubmatch(out)
	if m == nil {
		t.Fatal("no summary line in dtconform's output")
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}
