package testprog

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/lockedbuf"
)

// Running is a command a test started and watches while it runs (a
// dtrace that traces until it is signalled): its standard output and
// error are collected as it writes them.
type Running struct {
	Cmd            *exec.Cmd
	Stdout, Stderr lockedbuf.Buffer
	done           chan struct{}
	err            error
}

// StartCmd starts cmd with its output collected (cmd.Stdout and
// cmd.Stderr are set). The test kills it, and its process group where
// cmd.SysProcAttr makes one, if it still runs when the test ends.
func StartCmd(t testing.TB, cmd *exec.Cmd) *Running {
	t.Helper()
	r := &Running{Cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &r.Stdout, &r.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.err = cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		if cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		} else {
			cmd.Process.Kill()
		}
		<-r.done
	})
	return r
}

// Done is closed once the command has exited.
func (r *Running) Done() <-chan struct{} { return r.done }

// Err is what waiting for the command returned; call it after Done.
func (r *Running) Err() error { return r.err }

// Await polls ok every 20 ms until it holds, at most timeout. It returns
// an error if the command exits first or the time runs out.
func (r *Running) Await(timeout time.Duration, ok func() bool) error {
	for end := time.Now().Add(timeout); !ok(); time.Sleep(20 * time.Millisecond) {
		select {
		case <-r.done:
			if ok() {
				return nil
			}
			return fmt.Errorf("%q exited (%v) before", r.Cmd.Args, r.err)
		default:
		}
		if time.Now().After(end) {
			return fmt.Errorf("%q: not within %v", r.Cmd.Args, timeout)
		}
	}
	return nil
}

// WaitOutput waits (at most timeout) until the standard output holds
// want, and fails the test if it does not.
func (r *Running) WaitOutput(t testing.TB, want string, timeout time.Duration) {
	t.Helper()
	if err := r.Await(timeout, func() bool { return strings.Contains(r.Stdout.String(), want) }); err != nil {
		t.Fatalf("%v printing %q; stdout %q, stderr %q", err, want, r.Stdout.String(), r.Stderr.String())
	}
}

// WaitLine waits (at most timeout) until a line of the standard output
// is want, and fails the test if none is.
func (r *Running) WaitLine(t testing.TB, want string, timeout time.Duration) {
	t.Helper()
	if err := r.Await(timeout, func() bool { return r.HasLine(want) }); err != nil {
		t.Fatalf("%v printing the line %q; stdout %q, stderr %q", err, want, r.Stdout.String(), r.Stderr.String())
	}
}

// HasLine reports whether a line of the standard output so far is want.
func (r *Running) HasLine(want string) bool {
	out := r.Stdout.String()
	return strings.HasPrefix(out, want+"\n") || strings.Contains(out, "\n"+want+"\n")
}

// Wait waits (at most timeout) for the command to exit and returns its
// exit status; the test fails if it is still running then.
func (r *Running) Wait(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(timeout):
		t.Fatalf("%q still running after %v; stdout %q, stderr %q", r.Cmd.Args, timeout, r.Stdout.String(), r.Stderr.String())
	}
	return r.Cmd.ProcessState.ExitCode()
}
