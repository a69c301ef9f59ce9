package fbt

// Offsets in x86-64's struct pt_regs of the registers that carry the
// first six arguments (rdi, rsi, rdx, rcx, r8, r9), the return value
// (rax) and the stack pointer.
var argRegs = []int16{112, 104, 96, 88, 72, 64}

const (
	retReg = 80
	spReg  = 152
	// stackArgSlot: at function entry the stack pointer points at the
	// return address; the seventh argument is the next slot.
	stackArgSlot = 1
)

// endbrSize is the length of the ENDBR64 instruction a function of a
// kernel built for indirect branch tracking starts with, before the call
// the function tracer patches: the tracer lists the call's address, the
// kprobe.multi link knows the function by its start (it subtracts the
// ENDBR64 from the address a hit comes from before finding the cookie).
const endbrSize = 4
