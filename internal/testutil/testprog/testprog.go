// Package testprog builds the C programs that the tests trace (work.c for
// the pid provider, usdt.c for USDT, calls.c for the end-to-end tests of
// the output formats and of other kernels) with gcc, and the module's
// commands they run.
package testprog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// Dir returns the directory holding the C sources (testdata, which the
// go tool leaves alone).
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata")
}

// Build compiles the named sources (relative to Dir) with gcc (g++ for
// C++ sources) and the given flags into an executable in a temporary
// directory of t, and returns its path. A machine without gcc fails the
// test: the providers cannot be tested without their test programs.
func Build(t testing.TB, name string, sources []string, flags ...string) string {
	t.Helper()
	return BuildIn(t, t.TempDir(), name, sources, flags...)
}

// BuildIn is Build into dir: for a program that a guest kernel runs,
// which does not see this machine's /tmp.
func BuildIn(t testing.TB, dir, name string, sources []string, flags ...string) string {
	t.Helper()
	out, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-o", out}, flags...)
	for _, s := range sources {
		args = append(args, filepath.Join(Dir(), s))
	}
	compiler := "gcc"
	for _, s := range sources {
		if filepath.Ext(s) == ".cc" {
			compiler = "g++"
		}
	}
	cmd := exec.Command(compiler, args...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, msg)
	}
	return out
}

// NeedRoot skips the test unless it runs as root, which tracing (BPF,
// tracefs: what) needs.
func NeedRoot(t testing.TB, what string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for " + what)
	}
}

// ExitStatus runs cmd and returns its exit status. The test fails if
// cmd cannot run, or is still running after a minute (it is killed
// then); its output pipes are waited for at most 5 s after it exits.
func ExitStatus(t testing.TB, cmd *exec.Cmd) int {
	t.Helper()
	return ExitStatusWithin(t, cmd, time.Minute)
}

// ExitStatusWithin is ExitStatus with another bound than a minute: under
// a guest's emulation, starting dtrace alone can take most of one.
func ExitStatusWithin(t testing.TB, cmd *exec.Cmd, timeout time.Duration) int {
	t.Helper()
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(timeout, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	if !timer.Stop() {
		t.Fatalf("%s still running after %v: killed", cmd, timeout)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// Run runs cmd as ExitStatus does (killed after a minute) and returns
// its standard output, its standard error and its exit status.
func Run(t testing.TB, cmd *exec.Cmd) (stdout, stderr string, status int) {
	t.Helper()
	return RunWithin(t, cmd, time.Minute)
}

// RunWithin is Run with another bound than a minute.
func RunWithin(t testing.TB, cmd *exec.Cmd, timeout time.Duration) (stdout, stderr string, status int) {
	t.Helper()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	status = ExitStatusWithin(t, cmd, timeout)
	return o.String(), e.String(), status
}

// Output runs the command name with args as ExitStatus does (killed
// after a minute) and returns its standard output and error, in the
// order written, and its exit status.
func Output(t testing.TB, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	status := ExitStatus(t, cmd)
	return out.String(), status
}

// EnvFile reads the file named by the environment variable env (a
// manual aid: a test that investigates a given D script), skipping the
// test where env is unset.
func EnvFile(t testing.TB, env string) (path string, src []byte) {
	t.Helper()
	path = os.Getenv(env)
	if path == "" {
		t.Skip("set " + env)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, src
}

// BuildCmd builds the module's cmd/name (dtrace, dtconform) into dir and
// returns the binary's absolute path.
func BuildCmd(t testing.TB, dir, name string) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := buildCmd(bin, name); err != nil {
		t.Fatalf("go build %s: %v\n%s", name, err, out)
	}
	return bin
}

// SharedCmd builds the module's cmd/name once per test binary, into a
// temporary directory that outlives the tests (for packages without a
// TestMain to remove it: MainCmd does), and returns its path.
func SharedCmd(t testing.TB, name string) string {
	t.Helper()
	v, _ := shared.LoadOrStore(name, new(sharedCmd))
	c := v.(*sharedCmd)
	c.once.Do(func() {
		dir, err := os.MkdirTemp("", name)
		if err != nil {
			c.err = err
			return
		}
		c.path = filepath.Join(dir, name)
		if out, err := buildCmd(c.path, name); err != nil {
			c.err = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if c.err != nil {
		t.Fatalf("go build %s: %v", name, c.err)
	}
	return c.path
}

// shared holds SharedCmd's commands by name.
var shared sync.Map

type sharedCmd struct {
	once sync.Once
	path string
	err  error
}

// buildCmd builds the module's cmd/name as bin.
func buildCmd(bin, name string) ([]byte, error) {
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/"+name)
	cmd.Dir = filepath.Join(filepath.Dir(Dir()), "..", "..", "..")
	return cmd.CombinedOutput()
}

// MainCmd is the body of a TestMain whose tests all run the module's
// cmd/name: it builds the command into a temporary directory, sets *bin
// to its path, runs the tests and removes the directory. It returns the
// exit status for os.Exit: m.Run's, or 1 when the build failed.
func MainCmd(m *testing.M, name string, bin *string) int {
	dir, err := os.MkdirTemp("", name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	*bin = filepath.Join(dir, name)
	if out, err := buildCmd(*bin, name); err != nil {
		fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", name, err, out)
		return 1
	}
	return m.Run()
}

// BuildSource compiles C source text, as Build compiles files, into an
// executable called name.
func BuildSource(t testing.TB, name, source string, flags ...string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, name+".c")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	cmd := exec.Command("gcc", append(append([]string{"-o", out}, flags...), src)...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, msg)
	}
	return out
}

// BuildWork builds work.c.
func BuildWork(t testing.TB, flags ...string) string {
	return Build(t, "work", []string{"work.c"}, flags...)
}

// BuildCalls builds calls.c (in dir, or in a temporary directory when
// dir is ""), with the given flags.
func BuildCalls(t testing.TB, dir string, flags ...string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	return BuildIn(t, dir, "calls", []string{"calls.c"}, flags...)
}

// BuildUSDT builds usdt.c and usdt_sem.c.
func BuildUSDT(t testing.TB, flags ...string) string {
	return Build(t, "usdt", []string{"usdt.c", "usdt_sem.c"}, flags...)
}

// Sum returns what work prints for n: the sum of work(i) = 3i+1.
func Sum(n int) int64 {
	var s int64
	for i := 0; i < n; i++ {
		s += int64(3*i + 1)
	}
	return s
}

// BuildThrow builds throw.cc, which throws and catches exceptions.
func BuildThrow(t testing.TB, flags ...string) string {
	return Build(t, "throw", []string{"throw.cc"}, flags...)
}
