//go:build linux

package dtrace

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/symbol"
)

// The evaltime option: where a process dtrace -c creates is held while
// tracing starts. exec holds it inside its execve, at ptrace's exec event
// (exechold_linux.go), preinit at its entry point (libraries loaded, no
// constructor run yet), postinit and main at main() (constructors run),
// as in dtrace-utils. Without the option the hold is postinit's,
// dtrace-utils' default, so that what a traced program does starts at
// main() and not with the dynamic linker's work (builtinvar/tst.errno3
// counts the program's own system calls). Where main() cannot be found
// (a stripped program, a script's interpreter) the hold is at the entry
// point, and where this architecture has no breakpoints it is exec's,
// silently, as dtrace-utils falls back.

// holdsInExec reports whether evaltime holds the process inside its
// execve.
func holdsInExec(evaltime string) bool {
	return evaltime == "exec" || evaltime == "" && !haveBreakpoints
}

// holdTimeout bounds the run from exec to the hold point: a program that
// has not reached it by then (a constructor waiting for input) is killed
// and -c fails.
const holdTimeout = 20 * time.Second

// atEntry is AT_ENTRY, the auxiliary vector's entry point.
const atEntry = 9

// holdAt runs the process pid, stopped after exec under ptrace, to the
// hold point of evaltime (preinit, postinit, main or "" for postinit).
// On an error the process may be anywhere: the caller kills it.
func holdAt(pid int, evaltime string) error {
	entry, err := auxvEntry(pid)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(holdTimeout)
	if evaltime == "preinit" {
		return runToBreakpoint(pid, entry, deadline)
	}
	if m, ok := mainAddr(pid, entry); ok {
		return runToBreakpoint(pid, m, deadline)
	}
	// No symbol (a stripped program): as dtrace-utils does, catch libc
	// starting the program, whose first argument is main().
	if err := runToBreakpoint(pid, entry, deadline); err != nil {
		return err
	}
	// A Go program starts at the runtime's own entry, never through
	// libc's __libc_start_main (even one linked with the C library), so
	// a breakpoint there would never be reached: it is held at its entry
	// point, as a program without main().
	if goProgram(pid) {
		return nil
	}
	start, ok := libcStartMain(pid)
	if !ok {
		return nil
	}
	if err := runToBreakpoint(pid, start, deadline); err != nil {
		return err
	}
	m, err := ptraceArg0(pid)
	if err != nil {
		return err
	}
	return runToBreakpoint(pid, m, deadline)
}

// goProgram reports whether the process runs a Go program (its
// executable has Go's build information section).
func goProgram(pid int) bool {
	f, err := elf.Open(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Section(".go.buildinfo") != nil
}

// libcStartMain finds __libc_start_main in the C library the stopped
// process has mapped (at its entry point the dynamic linker has mapped
// every library it needs).
func libcStartMain(pid int) (uint64, bool) {
	p, err := symbol.ReadProcess(pid)
	if err != nil {
		return 0, false
	}
	for _, mod := range p.Modules() {
		if !strings.HasPrefix(mod.Name, "libc.so") && !strings.HasPrefix(mod.Name, "libc-") {
			continue
		}
		o, err := symbol.OpenObject(p.OpenPath(mod))
		if err != nil {
			return 0, false
		}
		v, ok := o.SymbolValue("__libc_start_main")
		bias, biased := p.Bias(mod, o)
		return v + bias, ok && biased && v != 0
	}
	return 0, false
}

// exeClass is the ELF class of the process's executable (ELFCLASS32 for
// a program built with gcc -m32), or ELFCLASSNONE.
func exeClass(pid int) elf.Class {
	f, err := elf.Open(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return elf.ELFCLASSNONE
	}
	defer f.Close()
	return f.Class
}

// auxvEntry reads the program's entry point (AT_ENTRY) from its
// auxiliary vector, whose words are as wide as the program's (4 bytes
// in a 32-bit program).
func auxvEntry(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/auxv", pid))
	if err != nil {
		return 0, err
	}
	word := func(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
	w := 8
	if exeClass(pid) == elf.ELFCLASS32 {
		w = 4
		word = func(b []byte) uint64 { return uint64(binary.LittleEndian.Uint32(b)) }
	}
	for i := 0; i+2*w <= len(b); i += 2 * w {
		if word(b[i:]) == atEntry {
			return word(b[i+w:]), nil
		}
	}
	return 0, errors.New("no entry point in the auxiliary vector")
}

// mainAddr finds main() in the program's symbol tables (the symbol
// package's reader: a separate debug file too), relocated by the load
// bias (AT_ENTRY less the ELF header's entry).
func mainAddr(pid int, entry uint64) (uint64, bool) {
	o, err := symbol.OpenObject(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return 0, false
	}
	v, ok := o.SymbolValue("main")
	return v + entry - o.Entry, ok && v != 0
}

// waitStop waits for the traced process to change state, until deadline.
func waitStop(pid int, deadline time.Time) (unix.WaitStatus, error) {
	var ws unix.WaitStatus
	for pause := time.Millisecond; ; pause = min(2*pause, 20*time.Millisecond) {
		wpid, err := unix.Wait4(pid, &ws, unix.WALL|unix.WNOHANG, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return ws, err
		case wpid == pid:
			return ws, nil
		case time.Now().After(deadline):
			return ws, fmt.Errorf("process %d did not reach its hold point (evaltime) within %v", pid, holdTimeout)
		}
		time.Sleep(pause)
	}
}

// runToBreakpoint lets the process run until it reaches addr, through a
// breakpoint there, removed once hit; signals on the way are passed on.
func runToBreakpoint(pid int, addr uint64, deadline time.Time) error {
	pc, err := ptracePC(pid)
	if err != nil || pc == addr {
		return err
	}
	saved := make([]byte, 8)
	if _, err := unix.PtracePeekData(pid, uintptr(addr), saved); err != nil {
		return fmt.Errorf("cannot read %#x: %v", addr, err)
	}
	if _, err := unix.PtracePokeData(pid, uintptr(addr), breakpoint(saved)); err != nil {
		return fmt.Errorf("cannot set a breakpoint at %#x: %v", addr, err)
	}
	sig := 0
	for {
		if err := unix.PtraceCont(pid, sig); err != nil {
			return err
		}
		ws, err := waitStop(pid, deadline)
		if err != nil {
			return err
		}
		if !ws.Stopped() {
			return fmt.Errorf("process %d exited before its hold point (evaltime)", pid)
		}
		sig = int(ws.StopSignal())
		if ws.StopSignal() != unix.SIGTRAP || ws.TrapCause() > 0 {
			continue // a signal for the process, passed on
		}
		if hit, err := atBreakpoint(pid, addr); err != nil || hit {
			if err == nil {
				_, err = unix.PtracePokeData(pid, uintptr(addr), saved)
			}
			return err
		}
	}
}
