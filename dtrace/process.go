//go:build linux

package dtrace

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Process is a process that tracing follows, as dtrace -c (created) or
// -p (grabbed) names one; its pid is what Config.Target takes ($target).
// A created process is held stopped at its first instruction after exec
// (through ptrace) until Continue, so probes are enabled before it runs a
// line of its own. Run continues the processes it is given and stops
// tracing once they have all exited.
type Process struct {
	pid     int
	created bool
	release chan struct{} // closed to let a created process run
	exited  chan struct{} // closed when the process is gone
	atExit  func(pid int) // see AtExit
	// held, when set, is asked about each signal the created process
	// gets while traced: true suppresses it (a hold of the link-map
	// watcher, taken and let go: see Handle.followProcess).
	held func(pid int, sig unix.Signal) bool
}

// CreateProcess starts the command argv (argv[0] looked up in PATH)
// with the given standard streams, stopped just after exec, as dtrace -c
// does. The error reads "failed to execute NAME: REASON".
func CreateProcess(argv []string, stdin io.Reader, stdout, stderr io.Writer) (*Process, error) {
	return createProcess(argv, nil, "", stdin, stdout, stderr)
}

// createProcess is CreateProcess with the child's environment (nil:
// dtrace's own) and hold point (the evaltime option; "" is exec).
func createProcess(argv, env []string, evaltime string, stdin io.Reader, stdout, stderr io.Writer) (*Process, error) {
	if len(argv) == 0 {
		return nil, errors.New("failed to execute: no command")
	}
	p := &Process{created: true, release: make(chan struct{}), exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// ptrace requests must come from the thread that started the
		// child, so this goroutine keeps its thread to the end (the
		// thread is discarded when the goroutine returns locked).
		runtime.LockOSThread()
		defer close(p.exited)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		held := holdsInExec(evaltime)
		if held {
			var err error
			if cmd, err = helperCommand(argv, env); err != nil {
				started <- err
				return
			}
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
		// The child dies with dtrace, as illumos's dtrace sets
		// kill-on-last-close on the processes it creates: a killed
		// dtrace leaves nothing running that it started.
		cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true, Pdeathsig: syscall.SIGKILL}
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
		var err error
		if held {
			err = execHeld(pid)
		} else {
			err = holdAt(pid, evaltime)
		}
		if err != nil {
			// Never left stopped, nor running untraced: killed.
			_ = unix.Kill(pid, unix.SIGKILL)
			started <- err
			_ = cmd.Wait()
			return
		}
		p.pid = pid
		started <- nil
		<-p.release
		if p.atExit != nil || p.held != nil {
			p.traceToExit(pid)
		}
		_ = unix.PtraceDetach(pid)
		_ = cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("failed to execute %s: %s", argv[0], Strerror(err))
	}
	return p, nil
}

// traceToExit lets a created process run, still traced, until its exit
// event (the process is about to exit, its memory still there), runs
// atExit, and returns for the caller to detach. Signals the process
// receives are passed on; it returns early when the process is gone
// without an exit event.
func (p *Process) traceToExit(pid int) {
	// With exec events, a SIGTRAP stop is a signal to pass on, not the
	// trap of an exec.
	if unix.PtraceSetOptions(pid, unix.PTRACE_O_TRACEEXIT|unix.PTRACE_O_TRACEEXEC) != nil {
		return
	}
	sig := 0
	for {
		if unix.PtraceCont(pid, sig) != nil {
			return
		}
		var ws unix.WaitStatus
		if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil || !ws.Stopped() {
			return
		}
		sig = int(ws.StopSignal())
		switch {
		case p.held != nil && p.held(pid, ws.StopSignal()):
			sig = 0 // held by dtrace, now let go
		case ws.StopSignal() != unix.SIGTRAP || ws.TrapCause() <= 0:
			// A signal for the process (a group-stop ignores it).
		case ws.TrapCause() == unix.PTRACE_EVENT_EXIT:
			if p.atExit != nil {
				p.atExit(pid)
			}
			return
		default:
			sig = 0 // another event (exec)
		}
	}
}

// AtExit makes fn run when a created process is about to exit, while its
// memory is still mapped (ptrace's exit event), so that what it mapped
// late can still be read: a target that maps its libraries and exits
// within milliseconds is gone before a poll of its mappings comes
// round. Call it before Continue; grabbed processes ignore it.
func (p *Process) AtExit(fn func(pid int)) { p.atExit = fn }

// StartProcess is dtrace's -c (create: arg is the command line, split
// at blanks; env is its environment, nil for dtrace's own: see
// Options.ProcEnv) or -p (arg is the pid). A created process is held at
// evaltime's default, postinit. Errors are worded for printing
// after "dtrace: ".
func StartProcess(create bool, arg string, env []string, stdin io.Reader, stdout, stderr io.Writer) (*Process, error) {
	return startProcess(create, arg, env, "", stdin, stdout, stderr)
}

// StartProcess is the package's StartProcess with the options' setenv and
// unsetenv (ProcEnv) and evaltime: a created process is held where
// evaltime says (postinit by default).
func (o *Options) StartProcess(create bool, arg string, stdin io.Reader, stdout, stderr io.Writer) (*Process, error) {
	return startProcess(create, arg, o.ProcEnv, o.EvalTime, stdin, stdout, stderr)
}

func startProcess(create bool, arg string, env []string, evaltime string, stdin io.Reader, stdout, stderr io.Writer) (*Process, error) {
	if create {
		argv := strings.Fields(arg)
		if len(argv) == 0 {
			argv = []string{arg}
		}
		return createProcess(argv, env, evaltime, stdin, stdout, stderr)
	}
	pid, err := strconv.Atoi(arg)
	if err != nil || pid <= 0 {
		return nil, errors.New("invalid pid: " + arg)
	}
	return GrabProcess(pid)
}

// GrabProcess follows the existing process pid, as dtrace -p does; it is
// left running and alone when tracing ends.
func GrabProcess(pid int) (*Process, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("invalid pid: %d", pid)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		// dtrace-utils says no more than the reason when the process
		// does not exist ("dtrace: No such process").
		return nil, errors.New(Strerror(err))
	}
	if err != nil {
		return nil, fmt.Errorf("failed to grab pid %d: %s", pid, Strerror(err))
	}
	if exited(fd) {
		// A zombie cannot be grabbed either: dtrace-utils' libproc
		// fails to open its memory (its grab thread ends without a
		// process, and dtrace reports ESRCH as for one that does not
		// exist).
		unix.Close(fd)
		return nil, errors.New(Strerror(unix.ESRCH))
	}
	p := &Process{pid: pid, release: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer close(p.exited)
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err != unix.EINTR {
				return
			}
		}
	}()
	return p, nil
}

// exited reports whether the process of pidfd fd has exited (is a zombie
// waiting to be reaped): its pidfd then polls readable.
func exited(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if err != unix.EINTR {
			return err == nil && n > 0 && fds[0].Revents&unix.POLLIN != 0
		}
	}
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.pid }

// Exited is closed once the process is gone.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Continue lets a created process run; it is a no-op for grabbed ones
// and safe to call twice.
func (p *Process) Continue() {
	select {
	case <-p.release:
	default:
		close(p.release)
	}
}

// Abandon kills a created process when the caller is done with it: one
// never continued (tracing failed to start) or one still running when
// tracing ends, as dtrace kills the processes it created. Grabbed
// processes are left alone.
func (p *Process) Abandon() {
	if !p.created {
		return
	}
	select {
	case <-p.exited:
		return
	default:
	}
	_ = unix.Kill(p.pid, unix.SIGKILL)
	p.Continue()
}

// allExited reports whether there are processes and all have exited.
func allExited(ps []*Process) bool {
	if len(ps) == 0 {
		return false
	}
	for _, p := range ps {
		select {
		case <-p.exited:
		default:
			return false
		}
	}
	return true
}
