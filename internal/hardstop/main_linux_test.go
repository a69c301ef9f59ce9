//go:build linux

package hardstop

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/lockedbuf"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// dtraceBin is the dtrace command built for these tests by TestMain.
var dtraceBin string

func TestMain(m *testing.M) {
	if os.Getuid() != 0 {
		// The tests skip themselves; nothing to build.
		os.Exit(m.Run())
	}
	os.Exit(testprog.MainCmd(m, "dtrace", &dtraceBin))
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root for BPF")
	}
}

// run is one dtrace process whose output the test watches.
type run struct {
	cmd            *exec.Cmd
	stdout, stderr lockedbuf.Buffer
	lines          chan string // stdout, line by line
	done           chan struct{}
	err            error
}

// startDtrace starts dtrace with args; its stdout is also delivered line
// by line on r.lines.
func startDtrace(t *testing.T, args ...string) *run {
	t.Helper()
	r := &run{cmd: exec.Command(dtraceBin, args...), lines: make(chan string, 1024), done: make(chan struct{})}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.cmd.Stderr = &r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			r.stdout.Write([]byte(sc.Text() + "\n"))
			select {
			case r.lines <- sc.Text():
			default:
			}
		}
		io.Copy(io.Discard, out)
		r.err = r.cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		<-r.done
	})
	return r
}

// waitLine waits for a line of stdout equal to want.
func (r *run) waitLine(t *testing.T, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case l := <-r.lines:
			if l == want {
				return
			}
		case <-r.done:
			t.Fatalf("dtrace %q exited (%v) before printing %q; stdout %q, stderr %q", r.cmd.Args[1:], r.err, want, r.stdout.String(), r.stderr.String())
		case <-deadline:
			t.Fatalf("dtrace %q: no %q after %v; stdout %q, stderr %q", r.cmd.Args[1:], want, timeout, r.stdout.String(), r.stderr.String())
		}
	}
}

// wait waits for dtrace to exit and returns its exit status.
func (r *run) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(timeout):
		t.Fatalf("dtrace %q still running after %v; stdout %q, stderr %q", r.cmd.Args[1:], timeout, r.stdout.String(), r.stderr.String())
	}
	return r.cmd.ProcessState.ExitCode()
}
