//go:build linux

package kerneltest

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/guesttest"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// calls is how many times the test program (testprog's calls.c) calls
// getppid and work: its argument, and the count the smoke set prints.
const calls = "1000"

// script runs the smoke set with dtrace $1 and the target $2; each
// program prints one line the test checks.
const script = `D=$1 P=$2 N=$3
$D -q -n 'BEGIN { printf("hello %d\n", 6 * 7); exit(0); }' 2>&1
$D -q -n 'BEGIN { printf("json %s\n", json("{\"a\":[1,{\"b\":\"x\"}]}", "a[1].b")); exit(0); }' 2>&1
$D -q -n 'syscall::getppid:entry /pid == $target/ { @ = count(); } END { printa("getppid %@d\n", @); }' -c "$P $N" 2>&1
$D -q -n 'profile-997 { @ = count(); } tick-1s { exit(0); } END { printa("profile %@d\n", @); }' 2>&1
$D -q -n 'pid$target::work:entry { @ = count(); } END { printa("pid work %@d\n", @); }' -c "$P $N" 2>&1
`

// want is the output the smoke set must give, on every kernel, once
// profile's count (which depends on time) is replaced by "fired".
var want = []string{
	"hello 42",
	"json x",
	"getppid " + calls,
	"profile fired",
	"pid work " + calls,
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
// (the guest sees the host's files, but has its own /tmp), writes the
// script there, returning the three's paths.
func setup(t *testing.T) (smoke, dtrace, prog string) {
	t.Helper()
	dir := guesttest.Dir(t, ".guest61-")
	dtrace = testprog.BuildCmd(t, dir, "dtrace")
	prog = testprog.BuildCalls(t, dir, "-O1")
	return guesttest.Script(t, dir, "smoke.sh", script), dtrace, prog
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
	guesttest.RunKernel(t)
	smoke, dtrace, prog := setup(t)
	args := []string{smoke, dtrace, prog, calls}

	if os.Geteuid() == 0 {
		out, status := testprog.Output(t, "sh", args...)
		if status != 0 {
			t.Fatalf("on this machine: exit status %d\n%s", status, out)
		}
		check(t, "this machine", normalize([]byte(out)))
	}

	out, err := guesttest.Run(t, "-k", guesttest.Kernel61, "-c", "2", "-t", "600", "uname -r; sh "+strings.Join(args, " "))
	t.Logf("6.1 guest:\n%s", out)
	if err != nil {
		t.Fatalf("run-kernel: %v\n%s", err, out)
	}
	got := normalize(out)
	if len(got) == 0 || !strings.HasPrefix(got[0], "6.1.") {
		t.Fatalf("guest kernel is not 6.1: %q", got)
	}
	check(t, "the 6.1 guest", got[1:])
}
