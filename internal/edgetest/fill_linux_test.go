//go:build linux

package edgetest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// running is a dtrace process the test watches and signals.
type running struct {
	cmd            *exec.Cmd
	mu             sync.Mutex
	stdout, stderr bytes.Buffer
	done           chan struct{}
	readme         readmeCommand // the README command it runs (TestReadme)
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// start starts dtrace with args; the test kills it if it is still
// running when the test ends.
func start(t *testing.T, args ...string) *running {
	t.Helper()
	testprog.NeedRoot(t, "BPF")
	r := &running{cmd: exec.Command(dtraceBin, args...), done: make(chan struct{})}
	r.cmd.Stdout, r.cmd.Stderr = lockedWriter{&r.mu, &r.stdout}, lockedWriter{&r.mu, &r.stderr}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		<-r.done
	})
	return r
}

func (r *running) output() (string, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stdout.String(), r.stderr.String()
}

// waitOutput waits until stdout holds want.
func (r *running) waitOutput(t *testing.T, want string, timeout time.Duration) {
	t.Helper()
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if out, _ := r.output(); strings.Contains(out, want) {
			return
		}
		select {
		case <-r.done:
			out, errs := r.output()
			t.Fatalf("dtrace exited before printing %q: stdout %q, stderr %q", want, out, errs)
		default:
		}
	}
	out, errs := r.output()
	t.Fatalf("no %q after %v: stdout %q, stderr %q", want, timeout, out, errs)
}

// wait waits for dtrace to exit, at most timeout, and returns how long
// that took and its exit status.
func (r *running) wait(t *testing.T, timeout time.Duration) (time.Duration, int) {
	t.Helper()
	begin := time.Now()
	select {
	case <-r.done:
	case <-time.After(timeout):
		out, errs := r.output()
		t.Fatalf("dtrace still running after %v: stdout %q, stderr %q", timeout, out, errs)
	}
	return time.Since(begin), r.cmd.ProcessState.ExitCode()
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

// TestFillEndsRun: under the fill policy a clause that records a user
// stack and calls printa() three times a firing at 4000 Hz on every CPU,
// its output sent to /dev/null, fills the 32m buffers; END fires and
// dtrace exits 0, as illumos's does. Each printa() used to read its
// aggregation's map afresh (a walk of the kernel's hash table per key),
// so the consumer fell minutes behind the records, which under fill are
// counted only as they are read: the run did not end.
func TestFillEndsRun(t *testing.T) {
	d := script(t, `#pragma D option bufpolicy=fill
#pragma D option bufsize=32m
BEGIN { freopen("/dev/null"); }
profile-4000hz { @a[cpu] = count(); @c = count(); ustack(); printa(@a); printa(@c); printa(@a); }
END { freopen(""); printf("END fired\n"); }
`)
	r := start(t, "-wqs", d)
	took, status := r.wait(t, 4*time.Minute)
	out, errs := r.output()
	t.Logf("exited after %v", took.Round(time.Second))
	if status != 0 || out != "END fired\n\n" {
		t.Errorf("status %d, stdout %q, want 0 and END's line; stderr %q", status, out, errs)
	}
}

// floodScript calls printa() of a 2,000-key aggregation four times a
// firing at 4000 Hz on every CPU: far more output than the consumer can
// make, so that its buffers always hold a backlog.
const floodScript = `BEGIN { printf("ready\n"); freopen("/dev/null"); }
profile-4000hz { @a[cpu] = count(); @b[timestamp % 2000] = count(); printa(@a); printa(@b); printa(@a); printa(@b); }
END { freopen(""); printf("END fired\n"); }
`

// TestSignalsUnderFlood: however far the consumer is behind, SIGINT and
// SIGTERM stop dtrace within a second, as they stop dtrace(1M): END
// fires, its output and the drops are reported, everything is detached
// (the process is gone), status 0; a second signal ends it at once.
// dtrace delivers for 400 ms after the signal, then does 0.2 s of CPU
// work or less (END, the final aggregations, detaching; measured after a
// 10-minute flood), 0.3-3.1 s of wall time at load 25-35 on this 2-CPU
// machine; the bound asserted is 10 s, for a slower machine under load,
// far below what it guards against: a drain of the backlog used to run
// to its end before the signal was looked at, and SIGTERM was not
// heeded for minutes.
func TestSignalsUnderFlood(t *testing.T) {
	d := script(t, floodScript)
	for _, c := range []struct {
		name string
		sigs []syscall.Signal
	}{
		{"SIGTERM", []syscall.Signal{syscall.SIGTERM}},
		{"SIGINT", []syscall.Signal{syscall.SIGINT}},
		{"twice", []syscall.Signal{syscall.SIGTERM, syscall.SIGINT}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := start(t, "-wqs", d)
			r.waitOutput(t, "ready\n", 2*time.Minute*slow())
			time.Sleep(3 * time.Second) // the backlog builds up
			for _, s := range c.sigs {
				if err := r.cmd.Process.Signal(s); err != nil {
					t.Fatal(err)
				}
			}
			took, status := r.wait(t, 10*time.Second*slow())
			out, errs := r.output()
			t.Logf("exited %v after the signal; stderr %q", took.Round(time.Millisecond), errs)
			if status != 0 {
				t.Errorf("status %d, want 0; stdout %q, stderr %q", status, out, errs)
			}
			if len(c.sigs) == 1 && !strings.HasSuffix(out, "END fired\n\n") {
				t.Errorf("stdout %q does not end with END's output", out)
			}
		})
	}
}
