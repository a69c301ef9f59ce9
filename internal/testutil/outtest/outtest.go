// Package outtest builds dtrace and a target program for the end-to-end
// tests of the output formats, and runs them.
package outtest

import (
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// Build builds cmd/dtrace and testprog's calls.c (which calls getppid and
// work n times each, n its argument) into the test's temporary directory
// and returns their paths; -g keeps DWARF line information for pprof. It
// skips the test unless it runs as root (tracing needs it).
func Build(t *testing.T) (dtrace, target string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root for BPF")
	}
	if testing.Short() {
		t.Skip("builds dtrace")
	}
	dir := t.TempDir()
	return testprog.BuildCmd(t, dir, "dtrace"), testprog.BuildCalls(t, dir, "-g", "-O1", "-fno-omit-frame-pointer")
}

// Run runs dtrace with args and returns its standard output, standard
// error and exit status.
func Run(t *testing.T, dtrace string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	cmd := exec.Command(dtrace, args...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if x, ok := err.(*exec.ExitError); ok {
		status = x.ExitCode()
	} else if err != nil {
		t.Fatalf("dtrace: %v", err)
	}
	return o.String(), e.String(), status
}

// Refused runs dtrace with -x option (name=value) and a BEGIN clause, and
// fails the test unless dtrace refuses the option before anything is
// attached: a failing status, nothing on standard output, "-x name:
// Invalid value" and no "matched" on standard error.
func Refused(t *testing.T, dtrace, option string) {
	t.Helper()
	name, _, _ := strings.Cut(option, "=")
	stdout, stderr, status := Run(t, dtrace, "-x", option, "-n", "BEGIN { trace(1); exit(0); }")
	if status == 0 || stdout != "" || !strings.Contains(stderr, "-x "+name+": Invalid value") || strings.Contains(stderr, "matched") {
		t.Errorf("-x %s: status %d, stdout %q, stderr %q", option, status, stdout, stderr)
	}
}

// Ustack runs dtrace with -x option over 100 calls of target's work,
// aggregating @[ustack()] = count() at work's entry, and returns what it
// prints; a failing status fails the test.
func Ustack(t *testing.T, dtrace, target, option string) string {
	t.Helper()
	stdout, stderr, status := Run(t, dtrace, "-x", option,
		"-n", "pid$target:a.out:work:entry { @[ustack()] = count(); }", "-c", target+" 100")
	if status != 0 {
		t.Fatalf("-x %s: status %d\n%s", option, status, stderr)
	}
	return stdout
}

// Renders builds dtrace and the target (Build) for the test of a
// renderer chosen by the -x option name, checks that name=bad is refused
// (Refused), and returns what dtrace prints of Ustack with name=value.
func Renders(t *testing.T, name, bad, value string) string {
	t.Helper()
	dtrace, target := Build(t)
	Refused(t, dtrace, name+"="+bad)
	return Ustack(t, dtrace, target, name+"="+value)
}

// Parse returns what parse makes of the file path, failing the test if
// it cannot be opened or parsed.
func Parse[T any](t testing.TB, path string, parse func(io.Reader) (T, error)) T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// FreeAddr returns a loopback address (127.0.0.1:port) that nothing
// listens on now, for a server the test starts (dtrace's -x prometheus,
// a Collector).
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
