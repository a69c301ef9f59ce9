//go:build linux && amd64

package dtrace

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// haveBreakpoints: evaltime's holds past exec are implemented here.
const haveBreakpoints = true

// The general registers (NT_PRSTATUS) as the kernel gives them for the
// traced process: x86-64's user_regs_struct, or i386's for a 32-bit
// program (gcc -m32), told apart by their size; the offsets of the
// instruction pointer in each.
const (
	regsSize64 = 27 * 8
	regsSize32 = 17 * 4
	ipOff64    = 16 * 8 // rip
	ipOff32    = 12 * 4 // eip
	spOff32    = 15 * 4 // esp
)

// getRegs reads the stopped process's general registers and the offset
// and width of its instruction pointer among them.
func getRegs(pid int) (regs []byte, ipOff, ipSize int, err error) {
	buf := make([]byte, regsSize64)
	iov := unix.Iovec{Base: &buf[0]}
	iov.SetLen(len(buf))
	if _, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GETREGSET, uintptr(pid), uintptr(elf.NT_PRSTATUS),
		uintptr(unsafe.Pointer(&iov)), 0, 0); e != 0 {
		return nil, 0, 0, e
	}
	switch iov.Len {
	case regsSize64:
		return buf, ipOff64, 8, nil
	case regsSize32:
		return buf[:regsSize32], ipOff32, 4, nil
	}
	return nil, 0, 0, errors.New("registers of an unknown size")
}

// setRegs writes back registers getRegs read.
func setRegs(pid int, regs []byte) error {
	iov := unix.Iovec{Base: &regs[0]}
	iov.SetLen(len(regs))
	if _, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SETREGSET, uintptr(pid), uintptr(elf.NT_PRSTATUS),
		uintptr(unsafe.Pointer(&iov)), 0, 0); e != 0 {
		return e
	}
	return nil
}

func regWord(b []byte, size int) uint64 {
	if size == 4 {
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

// ptracePC is the stopped process's instruction pointer.
func ptracePC(pid int) (uint64, error) {
	regs, off, size, err := getRegs(pid)
	if err != nil {
		return 0, err
	}
	return regWord(regs[off:], size), nil
}

// ptraceArg0 is the first argument of the function the stopped process
// has just entered: rdi, or in a 32-bit process (i386's cdecl) the word
// above the return address on the stack.
func ptraceArg0(pid int) (uint64, error) {
	regs, _, size, err := getRegs(pid)
	if err != nil {
		return 0, err
	}
	if size == 4 {
		var b [4]byte
		sp := uintptr(regWord(regs[spOff32:], 4))
		if _, err := unix.PtracePeekData(pid, sp+4, b[:]); err != nil {
			return 0, err
		}
		return uint64(binary.LittleEndian.Uint32(b[:])), nil
	}
	var r unix.PtraceRegs
	err = unix.PtraceGetRegs(pid, &r)
	return r.Rdi, err
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
	regs, off, size, err := getRegs(pid)
	if err != nil {
		return false, err
	}
	if regWord(regs[off:], size) != addr+1 {
		return false, nil
	}
	if size == 4 {
		binary.LittleEndian.PutUint32(regs[off:], uint32(addr))
	} else {
		binary.LittleEndian.PutUint64(regs[off:], addr)
	}
	return true, setRegs(pid, regs)
}
