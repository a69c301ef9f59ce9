//go:build linux

package dtrace

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// evaltime=exec holds a process dtrace -c creates inside its execve, at
// ptrace's exec event, as dtrace-utils does: the new image is in place
// but the system call has not returned, so what fires as it returns
// (proc:::exec-success, syscall::execve:return) fires once tracing has
// started. ptrace's options must be set before that execve, which
// os/exec's fork leaves no room for: the child first executes this
// binary again (/proc/self/exe), stopped after that exec as PTRACE_TRACEME
// stops it; dtrace sets PTRACE_O_TRACEEXEC and lets it run to the init
// below, which executes the program.

// execHelperEnv names the environment variable that makes this binary,
// executed by dtrace -c, execute the program it names (a path) with its
// own arguments and the rest of its environment.
const execHelperEnv = "DTRACE_GO_EXEC_PROGRAM"

func init() {
	path, ok := os.LookupEnv(execHelperEnv)
	if !ok {
		return
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, execHelperEnv+"=") {
			env = append(env, kv)
		}
	}
	// Package initialization runs on the main thread, the thread
	// dtrace traces.
	err := syscall.Exec(path, os.Args, env)
	var errno syscall.Errno
	if !errors.As(err, &errno) || errno == 0 || errno > 255 {
		errno = syscall.ENOEXEC
	}
	// The exit status tells dtrace why (see execHeld).
	os.Exit(int(errno))
}

// helperCommand returns the command that starts argv through this
// binary, for execHeld. env nil is dtrace's own environment.
func helperCommand(argv, env []string) (*exec.Cmd, error) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, err
	}
	if env == nil {
		env = os.Environ()
	}
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: argv,
		Env: append(append([]string{}, env...), execHelperEnv+"="+path)}
	return cmd, nil
}

// execHeld runs the helper pid, stopped after its own exec, to the exec
// event of the program it executes; an exec that fails ends the helper
// with the errno as its exit status, returned as the error.
func execHeld(pid int) error {
	if err := unix.PtraceSetOptions(pid, unix.PTRACE_O_TRACEEXEC); err != nil {
		return err
	}
	sig := 0
	for {
		if err := unix.PtraceCont(pid, sig); err != nil {
			return err
		}
		var ws unix.WaitStatus
		if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil {
			return err
		}
		switch {
		case ws.Exited():
			return syscall.Errno(ws.ExitStatus())
		case ws.Signaled():
			return fmt.Errorf("killed by signal %d before its exec", ws.Signal())
		case ws.Stopped() && ws.StopSignal() == unix.SIGTRAP && ws.TrapCause() == unix.PTRACE_EVENT_EXEC:
			return nil
		case ws.Stopped():
			sig = int(ws.StopSignal()) // a signal for the process
		}
	}
}
