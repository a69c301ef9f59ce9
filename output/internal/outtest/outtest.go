// Package outtest builds dtrace and a target program for the end-to-end
// tests of the output formats.
package outtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Target calls getppid and a function of its own, work, n times each
// (n its argument), so that a syscall count and a pid probe count are
// exact; -g keeps DWARF line information for pprof.
const Target = `#include <stdlib.h>
#include <unistd.h>

volatile long sink;

__attribute__((noinline)) void work(long i) { sink += i; }

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 0;
	for (long i = 0; i < n; i++) {
		sink += getppid();
		work(i);
	}
	return 0;
}
`

// root is the module's root, from this file's place in it.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Build builds cmd/dtrace and Target into the test's temporary directory
// and returns their paths. It skips the test unless it runs as root
// (tracing needs it) and cc is there.
func Build(t *testing.T) (dtrace, target string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root for BPF")
	}
	if testing.Short() {
		t.Skip("builds dtrace")
	}
	dir := t.TempDir()
	dtrace = filepath.Join(dir, "dtrace")
	cmd := exec.Command("go", "build", "-o", dtrace, "./cmd/dtrace")
	cmd.Dir = root()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	src := filepath.Join(dir, "target.c")
	if err := os.WriteFile(src, []byte(Target), 0o644); err != nil {
		t.Fatal(err)
	}
	target = filepath.Join(dir, "target")
	if out, err := exec.Command("cc", "-g", "-O1", "-fno-omit-frame-pointer", "-o", target, src).CombinedOutput(); err != nil {
		t.Skipf("cc: %v\n%s", err, out)
	}
	return dtrace, target
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
