//go:build linux

package kerneltest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runKernel is ../shared/vm/run-kernel as seen from this package.
const runKernel = "../../../shared/vm/run-kernel"

// kernel61 is the Debian package of Debian 12's own kernel.
const kernel61 = "linux-image-6.1.0-56-amd64-unsigned"

// calls is how many times the test program calls getppid and work.
const calls = 1000

// target calls getppid and a function of its own n times each, so that
// a syscall count and a pid probe count can be checked exactly.
const target = `#include <stdlib.h>
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

// script runs the smoke set with dtrace $1 and the target $2; each
// program prints one line the test checks.
const script = `D=$1 P=$2 N=$3
$D -q -n 'BEGIN { printf("hello %d\n", 6 * 7); exit(0); }' 2>&1
$D -q -n 'syscall::getppid:entry /pid == $target/ { @ = count(); } END { printa("getppid %@d\n", @); }' -c "$P $N" 2>&1
$D -q -n 'profile-997 { @ = count(); } tick-1s { exit(0); } END { printa("profile %@d\n", @); }' 2>&1
$D -q -n 'pid$target::work:entry { @ = count(); } END { printa("pid work %@d\n", @); }' -c "$P $N" 2>&1
`

// want is the output the smoke set must give, on every kernel, once
// profile's count (which depends on time) is replaced by "fired".
var want = []string{
	"hello 42",
	"getppid " + strconv.Itoa(calls),
	"profile fired",
	"pid work " + strconv.Itoa(calls),
}

var profileLine = regexp.MustCompile(`^profile ([1-9][0-9]*)$`)

// normalize drops empty lines and turns a positive profile count into
// "fired".
func normalize(out []byte) []string {
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.HasPrefix(l, "run-kernel:"):
			continue
		case profileLine.MatchString(l):
			l = "profile fired"
		}
		lines = append(lines, l)
	}
	return lines
}

// setup builds dtrace and the target into a directory under this one
// (the guest sees the host's files, but has its own /tmp) and writes
// the script there.
func setup(t *testing.T) (dir, dtrace, prog string) {
	t.Helper()
	d, err := os.MkdirTemp(".", ".guest61-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if dir, err = filepath.Abs(d); err != nil {
		t.Fatal(err)
	}
	dtrace = filepath.Join(dir, "dtrace")
	if out, err := exec.Command("go", "build", "-o", dtrace, "../../cmd/dtrace").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	src := filepath.Join(dir, "target.c")
	prog = filepath.Join(dir, "target")
	if err := os.WriteFile(src, []byte(target), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O1", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "smoke.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, dtrace, prog
}

func check(t *testing.T, where string, got []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s printed:\n%s\nwant:\n%s", where, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSmoke61 runs the smoke set on this machine and in a 6.1 guest:
// both must print want.
func TestSmoke61(t *testing.T) {
	if _, err := os.Stat(runKernel); err != nil {
		t.Skip("no run-kernel:", err)
	}
	dir, dtrace, prog := setup(t)
	args := []string{filepath.Join(dir, "smoke.sh"), dtrace, prog, strconv.Itoa(calls)}

	if os.Geteuid() == 0 {
		out, err := exec.Command("sh", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("on this machine: %v\n%s", err, out)
		}
		check(t, "this machine", normalize(out))
	}

	start := time.Now()
	cmd := exec.Command(runKernel, "-k", kernel61, "-c", "2", "-t", "600", "uname -r; sh "+strings.Join(args, " "))
	out, err := cmd.CombinedOutput()
	t.Logf("6.1 guest ran in %v:\n%s", time.Since(start).Round(time.Second), out)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 125 &&
		(bytes.Contains(out, []byte("kernel package found")) || bytes.Contains(out, []byte("cannot download"))) {
		t.Skipf("no %s: %s", kernel61, out)
	}
	if err != nil {
		t.Fatalf("run-kernel: %v\n%s", err, out)
	}
	got := normalize(out)
	if len(got) == 0 || !strings.HasPrefix(got[0], "6.1.") {
		t.Fatalf("guest kernel is not 6.1: %q", got)
	}
	check(t, "the 6.1 guest", got[1:])
}
