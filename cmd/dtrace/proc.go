package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// victim is a process named by -c (created) or -p (grabbed). A created
// process is held stopped at its first instruction after exec (through
// ptrace) until release, so probes are enabled before it runs a line of
// its own.
type victim struct {
	pid     int
	created bool
	release chan struct{} // closed to let a created process run
	exited  chan struct{} // closed when the process is gone
}

// createProcess starts the -c command (split on white space, looked up in
// PATH), stopped just after exec.
func createProcess(command string, stdin io.Reader, stdout, stderr io.Writer) (*victim, error) {
	argv := strings.Fields(command)
	if len(argv) == 0 {
		argv = []string{command}
	}
	v := &victim{created: true, release: make(chan struct{}), exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// ptrace requests must come from the thread that started the
		// child, so this goroutine keeps its thread to the end (the
		// thread is discarded when the goroutine returns locked).
		runtime.LockOSThread()
		defer close(v.exited)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		pid := cmd.Process.Pid
		var ws unix.WaitStatus
		if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil || !ws.Stopped() {
			started <- fmt.Errorf("process %d did not stop after exec", pid)
			_ = cmd.Wait()
			return
		}
		v.pid = pid
		started <- nil
		<-v.release
		_ = unix.PtraceDetach(pid)
		_ = cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("failed to execute %s: %s", argv[0], errnoText(err))
	}
	return v, nil
}

// grabProcess follows an existing process (-p).
func grabProcess(arg string) (*victim, error) {
	pid, err := strconv.Atoi(arg)
	if err != nil || pid <= 0 {
		return nil, fmt.Errorf("invalid pid: %s", arg)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, fmt.Errorf("failed to grab pid %d: %s", pid, errnoText(err))
	}
	v := &victim{pid: pid, release: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer close(v.exited)
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err != unix.EINTR {
				return
			}
		}
	}()
	return v, nil
}

// continueProcess lets a created process run; it is a no-op for grabbed
// ones and safe to call twice.
func (v *victim) continueProcess() {
	select {
	case <-v.release:
	default:
		close(v.release)
	}
}

// abandon kills a created process when dtrace is done with it: one never
// released (dtrace failed before tracing started) or one still running
// when tracing ends, as dtrace kills the processes it created. Grabbed
// (-p) processes are left alone.
func (v *victim) abandon() {
	if !v.created {
		return
	}
	select {
	case <-v.exited:
		return
	default:
	}
	_ = unix.Kill(v.pid, unix.SIGKILL)
	select {
	case <-v.release:
	default:
		close(v.release)
	}
}

// errnoText gives strerror's wording for err where there is one.
func errnoText(err error) string {
	var errno syscall.Errno
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, os.ErrNotExist):
		return "No such file or directory"
	case errors.As(err, &errno):
		s := errno.Error()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return err.Error()
}
