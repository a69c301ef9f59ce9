//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testprog"
)

// loopSource is a program that calls getppid() as many times as its
// argument says and prints nothing.
const loopSource = `#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 0;
	for (long i = 0; i < n; i++)
		getppid();
	return 0;
}
`

// runTraced runs dtrace with args on the loop program making n calls
// (-c) and returns its standard output and error.
func runTraced(t *testing.T, bin, loop string, n int, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(bin, append(args, "-c", fmt.Sprintf("%s %d", loop, n))...)
	cmd.Env = withoutTesting(os.Environ())
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("dtrace: %v\n%s", err, errs.String())
	}
	return out.String(), errs.String()
}

// TestStreamNoDrops: a tight loop of 2,000,000 system calls, each
// printing a line, at default options: every line comes out and nothing
// is dropped (the readers keep the kernel rings empty while the records
// are decoded).
func TestStreamNoDrops(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root for BPF")
	}
	if testing.Short() {
		t.Skip("2,000,000 events")
	}
	bin := buildDtrace(t)
	loop := testprog.BuildSource(t, "getppid-loop", loopSource, "-O2")
	const n = 2000000
	out, errs := runTraced(t, bin, loop, n, "-q", "-n", `syscall::getppid:entry /pid == $target/ { printf("%d\n", ++i); }`)
	lines := strings.Split(strings.TrimSuffix(out, "\n\n"), "\n")
	if len(lines) != n || lines[n-1] != fmt.Sprint(n) {
		t.Errorf("%d lines, the last %q; want %d", len(lines), lines[len(lines)-1], n)
	}
	if strings.Contains(errs, "drop") {
		t.Errorf("drops reported:\n%s", errs)
	}
}
