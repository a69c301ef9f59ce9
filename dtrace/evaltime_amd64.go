//go:build linux && amd64

package dtrace

import "golang.org/x/sys/unix"

// haveBreakpoints: evaltime's holds past exec are implemented here.
const haveBreakpoints = true

// ptracePC is the stopped process's instruction pointer.
func ptracePC(pid int) (uint64, error) {
	var regs unix.PtraceRegs
	err := unix.PtraceGetRegs(pid, &regs)
	return regs.Rip, err
}

// breakpoint returns code with an int3 in its first byte.
func breakpoint(code []byte) []byte {
	b := append([]byte(nil), code...)
	b[0] = 0xcc
	return b
}

// atBreakpoint reports whether the process stopped on the int3 at addr;
// if so its instruction pointer is moved back onto addr.
func atBreakpoint(pid int, addr uint64) (bool, error) {
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(pid, &regs); err != nil {
		return false, err
	}
	if regs.Rip != addr+1 {
		return false, nil
	}
	regs.Rip = addr
	return true, unix.PtraceSetRegs(pid, &regs)
}

// ptraceArg0 is the first argument of the function the stopped process
// has just been called into (rdi).
func ptraceArg0(pid int) (uint64, error) {
	var regs unix.PtraceRegs
	err := unix.PtraceGetRegs(pid, &regs)
	return regs.Rdi, err
}
