package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
)

// ustackPCs writes the user stack's PCs, at most size bytes, at scratch
// offset off (bpf_get_stack's frame-pointer walk) and returns a register
// holding the number of bytes written (negative on failure). Where the
// provider stored a return address the walk misses (abi.MStateUCaller:
// a pid probe before the function's frame is linked, whose walk goes
// from the probed PC straight to the caller's caller), it becomes the
// second frame, unless the kernel's unwinder already put it there (newer
// kernels do at a function's first instruction).
func (f *fn) ustackPCs(off uint32, size int64) asm.Register {
	f.call(asm.FnGetStack, ctxOp(), scr(off), imm(size), imm(1<<8)) // BPF_F_USER_STACK
	n := f.result()
	if size <= 8 {
		return n
	}
	done := f.label("ustk")
	c, t := f.alloc(), f.alloc()
	f.emit(asm.JSLT.Imm(n, 0, done),
		asm.LoadMem(c, regScratch, int16(f.g.layout.MState)+abi.MStateUCaller, asm.DWord),
		asm.JEq.Imm(c, 0, done),
		asm.LoadMem(t, regScratch, int16(off+8), asm.DWord),
		asm.JEq.Reg(t, c, done))
	// Walk again one slot further, then move the probed PC back to the
	// first slot and put the caller in the second.
	f.call(asm.FnGetStack, ctxOp(), scr(off+8), imm(size-8), imm(1<<8))
	f.emit(asm.JSLT.Imm(asm.R0, 0, done),
		asm.Mov.Reg(n, asm.R0),
		asm.Add.Imm(n, 8),
		asm.LoadMem(t, regScratch, int16(off+8), asm.DWord),
		asm.StoreMem(regScratch, int16(off), t, asm.DWord),
		asm.LoadMem(c, regScratch, int16(f.g.layout.MState)+abi.MStateUCaller, asm.DWord),
		asm.StoreMem(regScratch, int16(off+8), c, asm.DWord))
	f.mark(done)
	f.free(c, t)
	return n
}
