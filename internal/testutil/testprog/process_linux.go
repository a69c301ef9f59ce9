package testprog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/symbol"
)

// Process is a started test program blocked on its first read of standard
// input (as work.c, usdt.c and throw.cc are) until Release.
type Process struct {
	Cmd   *exec.Cmd
	Out   bytes.Buffer // what it writes to standard output
	stdin io.WriteCloser
}

// Pid returns the process's id.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

func newProcess(t testing.TB, path string, args []string) *Process {
	t.Helper()
	p := &Process{Cmd: exec.Command(path, args...)}
	p.Cmd.Stdout = &p.Out
	var err error
	if p.stdin, err = p.Cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	return p
}

// Start runs the program at path and returns once the process has exec'd
// it and its libraries are mapped. The process is killed when the test ends.
func Start(t testing.TB, path string, args ...string) *Process {
	t.Helper()
	p := newProcess(t, path, args)
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Cmd.Process.Kill(); p.Cmd.Wait() })
	deadline := time.Now().Add(5 * time.Second)
	for {
		if started(p.Pid(), path) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// started reports whether process pid has exec'd path and got past
// ld.so: /proc/PID/exe names path, its mappings hold path, and they hold
// libc, or it sleeps (its first read of stdin, or a sleep), which a
// process in the middle of exec or in ld.so does not. The link to exe is
// read first: the kernel points it at the new program before it maps the
// program's segments.
func started(pid int, path string) bool {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil || exe != path {
		return false
	}
	proc, err := symbol.ReadProcess(pid)
	if err != nil {
		return false
	}
	mapped, libc := false, false
	for _, m := range proc.Maps {
		mapped = mapped || m.Path == path
		libc = libc || strings.HasPrefix(filepath.Base(m.Path), "libc.so")
	}
	if !mapped || libc {
		return mapped
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name's closing parenthesis.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'S'
}

// StartStopped starts the program at path held by ptrace right after
// exec, before the dynamic linker has mapped any library, as dtrace -c
// does. detach lets it run.
func StartStopped(t testing.TB, path string, args ...string) (p *Process, detach func()) {
	t.Helper()
	p = newProcess(t, path, args)
	p.Cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	startErr := make(chan error)
	release := make(chan struct{})
	go func() {
		// ptrace requests must come from the thread that started the child.
		runtime.LockOSThread()
		if err := p.Cmd.Start(); err != nil {
			startErr <- err
			return
		}
		var ws unix.WaitStatus
		if _, err := unix.Wait4(p.Pid(), &ws, unix.WALL, nil); err != nil || !ws.Stopped() {
			startErr <- fmt.Errorf("no stop after exec: %v", err)
			return
		}
		startErr <- nil
		<-release
		unix.PtraceDetach(p.Pid())
	}()
	if err := <-startErr; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Cmd.Process.Kill() })
	return p, func() { close(release) }
}

// Release lets the program run and waits for it to exit.
func (p *Process) Release(t testing.TB) {
	t.Helper()
	p.stdin.Write([]byte{'\n'})
	p.stdin.Close()
	if err := p.Cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

// SemaphoreAddr returns the address, in process pid, of the semaphore of
// usdt.c's guarded probe (myprov_guarded_semaphore in its executable).
func SemaphoreAddr(t testing.TB, pid int) int64 {
	t.Helper()
	proc, err := symbol.ReadProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, mod := range proc.Modules() {
		if !mod.IsExe {
			continue
		}
		obj, err := symbol.LoadObject(proc.OpenPath(mod))
		if err != nil {
			t.Fatal(err)
		}
		bias, ok := proc.Bias(mod, obj)
		v, found := obj.SymbolValue("myprov_guarded_semaphore")
		if !ok || !found {
			t.Fatalf("semaphore: bias %v, symbol %v", ok, found)
		}
		return int64(v + bias)
	}
	t.Fatal("no executable mapping")
	return 0
}

// Peek reads the 16-bit word (a semaphore) at addr in process pid's
// memory.
func Peek(t testing.TB, pid int, addr int64) uint16 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [2]byte
	if _, err := f.ReadAt(b[:], addr); err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint16(b[:])
}

// Poke writes the 16-bit word v at addr in process pid's memory.
func Poke(t testing.TB, pid int, addr int64, v uint16) {
	t.Helper()
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", pid), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [2]byte
	binary.LittleEndian.PutUint16(b[:], v)
	if _, err := f.WriteAt(b[:], addr); err != nil {
		t.Fatal(err)
	}
}

// OpenObject opens the ELF object at path for its symbols and notes; an
// error fails the test.
func OpenObject(t testing.TB, path string) *symbol.Object {
	t.Helper()
	obj, err := symbol.OpenObject(path)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}
