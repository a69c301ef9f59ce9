package codegen

import (
	"fmt"
	"runtime"

	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
)

// alloca() memory and its bounds. alloca() and copyin() take scratch
// temporaries that live until the clause ends; mstate records the span
// they cover in this clause, as offsets from the scratch base (both 0
// until the first allocation: no memory). A store through a pointer must
// fall inside the span; a load through a pointer into scratch (past
// mstate) too. As in DTrace, a pointer kept from another clause points
// at no memory of this one.
const (
	msAllocaLo = 240 // u64 offset of the first alloca() byte of the clause
	msAllocaHi = 248 // u64 offset past the last one
)

// allocaReset marks the clause as having no alloca() memory yet.
func (f *fn) allocaReset() {
	ms := int16(f.g.layout.MState)
	f.emit(storeImm(regScratch, ms+msAllocaLo, 0, asm.DWord), storeImm(regScratch, ms+msAllocaHi, 0, asm.DWord))
}

// allocaMark records n bytes at scratch offset off as allocated: the span
// grows to end there, and starts there if it was empty.
func (f *fn) allocaMark(off, n uint32) {
	ms := int16(f.g.layout.MState)
	l := f.label("alhave")
	f.emit(asm.LoadMem(asm.R0, regScratch, ms+msAllocaHi, asm.DWord), asm.JNE.Imm(asm.R0, 0, l),
		storeImm(regScratch, ms+msAllocaLo, int64(off), asm.DWord))
	f.mark(l)
	f.emit(storeImm(regScratch, ms+msAllocaHi, int64(off+n), asm.DWord))
}

// allocaCheck faults unless the size bytes at scratch offset off (a
// register) lie within the clause's alloca() memory: "invalid address"
// (illval addr) when the first byte is outside, and when the bytes run
// past the end "invalid size" (illval size) if sizeFault, else "invalid
// address".
func (f *fn) allocaCheck(off, addr asm.Register, size uint32, sizeFault bool) {
	ms := int16(f.g.layout.MState)
	bad, ok := f.label("albad"), f.label("alok")
	f.emit(asm.LoadMem(asm.R0, regScratch, ms+msAllocaLo, asm.DWord), asm.JSLT.Reg(off, asm.R0, bad),
		asm.LoadMem(asm.R0, regScratch, ms+msAllocaHi, asm.DWord), asm.JSGE.Reg(off, asm.R0, bad),
		asm.Add.Imm(asm.R0, -int32(size)), asm.JSLE.Reg(off, asm.R0, ok))
	if sizeFault {
		r := f.alloc()
		f.emit(asm.Mov.Imm(r, int32(size)))
		f.fault(abi.FltBadSize, r, true)
		f.free(r)
	}
	f.mark(bad)
	f.fault(abi.FltBadAddr, addr, true)
	f.mark(ok)
}

// checkScratchLoad faults when the kernel address a (not consumed) of a
// load of size bytes points into scratch past mstate but neither into
// the clause-local variables nor into the clause's alloca() memory.
func (f *fn) checkScratchLoad(a asm.Register, size uint32) {
	ms := int16(f.g.layout.MState)
	off := f.alloc()
	out := f.label("alout")
	// Through memory a pointer the verifier tracks becomes a number.
	f.emit(asm.StoreMem(regScratch, ms+msLaunder, a, asm.DWord), asm.LoadMem(off, regScratch, ms+msLaunder, asm.DWord),
		asm.LoadMem(asm.R0, regScratch, ms+msBase, asm.DWord), asm.Sub.Reg(off, asm.R0),
		asm.JLT.Imm(off, int32(f.g.layout.Output), out), asm.JGE.Imm(off, int32(f.g.layout.Size), out))
	if tlo, thi := f.g.layout.Temps, f.g.layout.Temps+f.g.thisEnd; thi >= tlo+size {
		check := f.label("alchk")
		f.emit(asm.JLT.Imm(off, int32(tlo), check), asm.JLE.Imm(off, int32(thi-size), out))
		f.mark(check)
	}
	f.allocaCheck(off, a, size, false)
	f.mark(out)
	f.free(off)
}

// allocaTake returns the scratch offset of n fresh bytes of alloca()
// memory (8-byte aligned) and records them as allocated. Past them one
// byte more stays in the arena, so that a copy of n bytes can be read as
// a string ending there.
func (f *fn) allocaTake(n uint32) uint32 {
	off := f.allocaNext
	if n > 0 {
		f.allocaNext += align8(n + 1)
	}
	if used := f.allocaNext - f.g.allocaStart(); used > f.g.allocaMax {
		f.g.allocaMax = used
	}
	if f.allocaNext > f.g.allocaStart()+f.g.layout.Alloca {
		f.bail(fmt.Errorf("alloca( ) memory exceeds the scratch space"))
	}
	f.allocaMark(off, n)
	if n > 0 {
		f.emit(storeImm(regScratch, int16(off+n), 0, asm.Byte))
	}
	return off
}

// readInto copies n bytes from kernel or user address a (consumed) to
// scratch offset off; a failed read faults with "invalid address".
func (f *fn) readInto(a asm.Register, off, n uint32, user bool) {
	f.call(readHelper(user), scr(off), imm(int64(n)), keep(a))
	f.checkRead(a)
	f.free(a)
}

// derefHelper is the helper that reads what a D pointer points to, for
// a load through it (*p, p->m, a string at p): as dtrace-utils, which
// reads with bpf_probe_read. On x86-64 that is the kernel's compat
// helper, which reads the current process's memory at an address below
// the user address limit and kernel memory above it: a user pointer
// (curpsinfo->pr_envp) dereferences as in DTrace on illumos, where user
// and kernel share the address space. Elsewhere kernel memory only, as
// the compat helper is not offered.
func derefHelper(user, str bool) asm.BuiltinFunc {
	switch {
	case user && str:
		return asm.FnProbeReadUserStr
	case user:
		return asm.FnProbeReadUser
	case runtime.GOARCH == "amd64" && str:
		return asm.FnProbeReadStr
	case runtime.GOARCH == "amd64":
		return asm.FnProbeRead
	case str:
		return asm.FnProbeReadKernelStr
	}
	return asm.FnProbeReadKernel
}

// readHelper is the BPF helper that reads user or kernel memory.
func readHelper(user bool) asm.BuiltinFunc {
	if user {
		return asm.FnProbeReadUser
	}
	return asm.FnProbeReadKernel
}

// copyToAlloca implements bcopy() and copyinto(): n bytes (a register,
// consumed: a size known only at run time is fine) from kernel or user
// address src to dst, which must lie with the n bytes in the clause's
// alloca() memory. When checkSrc, a source in scratch must be alloca()
// memory too. All three registers are consumed.
func (f *fn) copyToAlloca(src, dst, n asm.Register, user, checkSrc bool) {
	g := f.g
	ms := int16(g.layout.MState)
	base, arena := int32(g.allocaStart()), int32(g.layout.Alloca)
	if checkSrc {
		off := f.alloc()
		out := f.label("alsout")
		f.emit(asm.StoreMem(regScratch, ms+msLaunder, src, asm.DWord), asm.LoadMem(off, regScratch, ms+msLaunder, asm.DWord),
			asm.LoadMem(asm.R0, regScratch, ms+msBase, asm.DWord), asm.Sub.Reg(off, asm.R0),
			asm.JLT.Imm(off, int32(g.layout.Output), out), asm.JGE.Imm(off, int32(g.layout.Size), out))
		f.allocaCheckReg(off, src, n)
		f.mark(out)
		f.free(off)
	}
	f.emit(asm.StoreMem(regScratch, ms+msLaunder, dst, asm.DWord), asm.LoadMem(dst, regScratch, ms+msLaunder, asm.DWord))
	off := f.alloc()
	f.emit(asm.LoadMem(off, regScratch, ms+msBase, asm.DWord), asm.Neg.Imm(off, 0), asm.Add.Reg(off, dst))
	f.allocaCheckReg(off, dst, n)
	// The check above keeps base <= off and off + n <= base + arena; the
	// verifier needs the same as constant bounds, and room for the
	// largest n after the largest off (allocaSlack).
	g.allocaSlack = true
	bad, ok := f.label("alcbad"), f.label("alcok")
	f.emit(asm.JSLT.Imm(off, base, bad), asm.JSGT.Imm(off, base+arena, bad),
		asm.JSLT.Imm(n, 0, bad), asm.JSGT.Imm(n, arena, bad), asm.Ja.Label(ok))
	f.mark(bad)
	f.fault(abi.FltBadAddr, dst, true)
	f.mark(ok)
	f.free(dst)
	p := f.alloc()
	f.emit(asm.Mov.Reg(p, regScratch), asm.Add.Reg(p, off))
	f.free(off)
	h := asm.FnProbeReadKernel
	if user {
		h = asm.FnProbeReadUser
	}
	f.call(h, reg(p), reg(n), keep(src))
	f.checkRead(src)
	f.free(src)
}

// allocaCheckReg is allocaCheck for a size in a register (n, kept): the
// size fault comes with a negative size too.
func (f *fn) allocaCheckReg(off, addr, n asm.Register) {
	ms := int16(f.g.layout.MState)
	bad, badSize, ok := f.label("albad"), f.label("albadsz"), f.label("alok")
	f.emit(asm.LoadMem(asm.R0, regScratch, ms+msAllocaLo, asm.DWord), asm.JSLT.Reg(off, asm.R0, bad),
		asm.LoadMem(asm.R0, regScratch, ms+msAllocaHi, asm.DWord), asm.JSGE.Reg(off, asm.R0, bad),
		asm.JSLT.Imm(n, 0, badSize), asm.Sub.Reg(asm.R0, n), asm.JSLE.Reg(off, asm.R0, ok))
	f.mark(badSize)
	f.fault(abi.FltBadSize, n, true)
	f.mark(bad)
	f.fault(abi.FltBadAddr, addr, true)
	f.mark(ok)
}
