// Package ktracetest runs D programs through a freshly built dtrace
// command, for the tests of the tracepoint providers.
package ktracetest

import (
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// BinaryEnv names the environment variable that gives Dtrace a dtrace
// command already built (a test binary run in a guest by run-kernel).
const BinaryEnv = "KTRACETEST_DTRACE"

// Dtrace builds cmd/dtrace once per test binary and returns its path, or
// the one BinaryEnv names.
func Dtrace(t *testing.T) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root for BPF")
	}
	// A test run in a guest kernel uses the dtrace built on the host.
	if bin := os.Getenv(BinaryEnv); bin != "" {
		return bin
	}
	return testprog.SharedCmd(t, "dtrace")
}

// Ready is what Run's programs print from BEGIN: Run starts the workload
// once it sees the line.
const Ready = "ktracetest-ready"

// Run runs dtrace -q with the program (to which it adds a BEGIN clause
// printing Ready and a clause that exits after timeout), calls workload
// once tracing has started, and returns dtrace's standard output without
// the Ready line. The program ends itself with exit(); dtrace failing is
// fatal.
func Run(t *testing.T, program string, timeout time.Duration, workload func()) string {
	t.Helper()
	bin := Dtrace(t)
	src := "BEGIN { ktracetest_n = 0; printf(\"" + Ready + "\\n\"); }\n" + program +
		"\ntick-100ms /(ktracetest_n += 100) >= " + itoa(timeout.Milliseconds()) + "/ { exit(0); }\n"
	r := testprog.StartCmd(t, exec.Command(bin, "-q", "-n", src))
	// No bound of its own: in a guest, starting dtrace may take minutes,
	// and a dtrace that fails ends the wait.
	if err := r.Await(24*time.Hour, func() bool { return r.HasLine(Ready) }); err != nil {
		t.Fatalf("dtrace ended before tracing: %v\nstderr: %s", err, r.Stderr.String())
	}
	if workload != nil {
		workload()
	}
	<-r.Done()
	out := strings.Replace(r.Stdout.String(), Ready+"\n", "", 1)
	if err := r.Err(); err != nil {
		t.Fatalf("dtrace: %v\nstderr: %s\nstdout: %s", err, r.Stderr.String(), out)
	}
	return out
}

// Waiting starts cmd with a pipe on its standard input, for a program
// that reads a line there before it does what the test traces, and
// returns the function that sends the line (a workload for Run). The
// process is killed when the test ends.
func Waiting(t *testing.T, cmd *exec.Cmd) (goOn func()) {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return func() { io.WriteString(in, "go\n") }
}

// Start runs the program at path with args as Waiting does, and returns
// its process id and the function that lets it go on.
func Start(t *testing.T, path string, args ...string) (pid int, goOn func()) {
	t.Helper()
	cmd := exec.Command(path, args...)
	goOn = Waiting(t, cmd)
	return cmd.Process.Pid, goOn
}

// SortedLines returns the lines of out, sorted: the records of a run come
// from per-CPU buffers, in no set order across CPUs.
func SortedLines(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// List runs the dtrace command with args (a listing: -l, -lv) and returns
// its output; dtrace failing is fatal.
func List(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(Dtrace(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("dtrace %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
