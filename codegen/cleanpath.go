package codegen

import "github.com/cilium/ebpf/asm"

// cleanpath(s) removes empty, "." and "dir/.." elements from a path
// lexically, as DTrace does: "" stays "", a relative path reduced to
// nothing is ".", leading ".." elements of a relative path stay, ".."
// at the root is the root, and the result has no trailing '/'.
//
// The call site copies the path into a block in scratch and runs bpf_loop
// with the callback dt_cleanpath, one step per call: a step copies one
// character of an element, skips a '/' or a "." element, or handles a ".."
// element. Where each element kept in the output started is pushed on a
// small stack (u16 entries), so that ".." pops back to it in one step.
const (
	cpR      = 0  // input position
	cpW      = 8  // output length
	cpSP     = 16 // stack depth
	cpInSeg  = 24 // nonzero while copying an element
	cpRooted = 32 // the path starts with '/'
	cpN      = 40 // input length
	cpHdr    = 48
	cpFunc   = "dt_cleanpath"
)

// cleanpathBlock returns the size of a call site's block and the offsets
// of the input copy, the output and the stack in it.
func (g *gen) cleanpathBlock() (size, src, out, stk uint32) {
	n := g.strBuf()
	src = cpHdr
	out = src + n
	stk = out + n
	return stk + align8(g.opts.StrSize+8), src, out, stk
}

// cleanpathCallback builds dt_cleanpath(index, ctx): ctx points to a
// stack slot holding the block's address. It returns 1 (stop) at the end
// of the input, 0 to go on.
func (g *gen) cleanpathCallback() asm.Instructions {
	size := int32(g.opts.StrSize)
	_, src, out, stk := g.cleanpathBlock()
	maxSP := int32(g.opts.StrSize/2 + 2)
	f := g.loopCallback(cpFunc)
	const (
		blk = asm.R6
		r   = asm.R7
		c   = asm.R8
		p   = asm.R9
		w   = asm.R1
		t   = asm.R2
	)
	stop, next := f.label("stop"), f.label("next")
	// appendChar writes ch (a register, or the byte imm when reg is R0)
	// at the output position.
	appendChar := func(ch asm.Register, v byte) {
		skip := f.label("full")
		f.emit(asm.LoadMem(w, blk, cpW, asm.DWord), asm.JSLT.Imm(w, 0, skip), asm.JSGE.Imm(w, size, skip),
			asm.Mov.Reg(t, blk), asm.Add.Reg(t, w))
		if ch == asm.R0 {
			f.emit(storeImm(t, int16(out), int64(v), asm.Byte))
		} else {
			f.emit(asm.StoreMem(t, int16(out), ch, asm.Byte))
		}
		f.emit(asm.Add.Imm(w, 1), asm.StoreMem(blk, cpW, w, asm.DWord))
		f.mark(skip)
	}
	f.emit(
		asm.LoadMem(r, blk, cpR, asm.DWord),
		asm.LoadMem(t, blk, cpN, asm.DWord),
		asm.JSGE.Reg(r, t, stop),
		asm.JSLT.Imm(r, 0, stop), asm.JSGE.Imm(r, size, stop),
		asm.Mov.Reg(p, blk), asm.Add.Reg(p, r),
		asm.LoadMem(c, p, int16(src), asm.Byte),
		asm.LoadMem(t, blk, cpInSeg, asm.DWord),
	)
	notSeg, endSeg := f.label("notseg"), f.label("endseg")
	f.emit(asm.JEq.Imm(t, 0, notSeg), asm.JEq.Imm(c, '/', endSeg))
	// Inside an element: copy the character.
	appendChar(c, 0)
	f.emit(asm.Add.Imm(r, 1), asm.Ja.Label(next))
	f.mark(endSeg)
	f.emit(storeImm(blk, cpInSeg, 0, asm.DWord), asm.Add.Imm(r, 1), asm.Ja.Label(next))

	f.mark(notSeg)
	notDot, notDotDot, elem := f.label("notdot"), f.label("notdotdot"), f.label("elem")
	skip1 := f.label("skip1")
	f.emit(asm.JEq.Imm(c, '/', skip1),
		asm.LoadMem(t, p, int16(src+1), asm.Byte),
		asm.JNE.Imm(c, '.', elem),
		// "." element: '.' then the end or '/'.
		asm.JEq.Imm(t, 0, skip1), asm.JEq.Imm(t, '/', skip1),
		asm.JNE.Imm(t, '.', notDot),
		// ".." element.
		asm.LoadMem(t, p, int16(src+2), asm.Byte),
		asm.JEq.Imm(t, 0, notDotDot), asm.JNE.Imm(t, '/', elem),
	)
	f.mark(notDotDot)
	// Back to where the last element kept started, if there is one.
	noPop := f.label("nopop")
	f.emit(asm.Add.Imm(r, 2),
		asm.LoadMem(t, blk, cpSP, asm.DWord), asm.JSLE.Imm(t, 0, noPop), asm.JSGT.Imm(t, maxSP, noPop),
		asm.Sub.Imm(t, 1), asm.StoreMem(blk, cpSP, t, asm.DWord),
		asm.LSh.Imm(t, 1), asm.Add.Reg(t, blk), asm.LoadMem(w, t, int16(stk), asm.Half),
		asm.StoreMem(blk, cpW, w, asm.DWord), asm.Ja.Label(next))
	f.mark(noPop)
	// Nothing to go back over: the root stays the root; a relative path
	// keeps the "..".
	f.emit(asm.LoadMem(t, blk, cpRooted, asm.DWord), asm.JNE.Imm(t, 0, next),
		asm.LoadMem(w, blk, cpW, asm.DWord), asm.JEq.Imm(w, 0, f.pendLabel("dd")))
	appendChar(asm.R0, '/')
	f.markPending()
	appendChar(asm.R0, '.')
	appendChar(asm.R0, '.')
	f.emit(asm.Ja.Label(next))

	f.mark(notDot)
	f.mark(elem)
	// A new element: push where it starts, add a separator unless the
	// output is empty or just the root, and copy its first character.
	noPush := f.label("nopush")
	f.emit(asm.LoadMem(t, blk, cpSP, asm.DWord), asm.JSLT.Imm(t, 0, noPush), asm.JSGE.Imm(t, maxSP, noPush),
		asm.LoadMem(w, blk, cpW, asm.DWord),
		asm.Mov.Reg(p, t), asm.LSh.Imm(p, 1), asm.Add.Reg(p, blk), asm.StoreMem(p, int16(stk), w, asm.Half),
		asm.Add.Imm(t, 1), asm.StoreMem(blk, cpSP, t, asm.DWord))
	f.mark(noPush)
	noSep := f.label("nosep")
	f.emit(asm.LoadMem(w, blk, cpW, asm.DWord), asm.LoadMem(t, blk, cpRooted, asm.DWord), asm.Sub.Reg(w, t),
		asm.JEq.Imm(w, 0, noSep))
	appendChar(asm.R0, '/')
	f.mark(noSep)
	appendChar(c, 0)
	f.emit(storeImm(blk, cpInSeg, 1, asm.DWord), asm.Add.Imm(r, 1), asm.Ja.Label(next))

	f.mark(skip1)
	f.emit(asm.Add.Imm(r, 1))
	f.mark(next)
	f.emit(asm.StoreMem(blk, cpR, r, asm.DWord), asm.Mov.Imm(asm.R0, 0), asm.Return())
	f.mark(stop)
	f.emit(asm.Mov.Imm(asm.R0, 1), asm.Return())
	return f.insns
}

// loopCallback starts the bpf_loop callback sym, called with ctx pointing
// to a stack slot that holds its block's address (runLoop): its first
// instruction loads the block into R6.
func (g *gen) loopCallback(sym string) *fn {
	f := newFn(g, sym)
	f.emit(asm.LoadMem(asm.R6, asm.R2, 0, asm.DWord).WithSymbol(sym).WithSource(asm.Comment(sym)))
	return f
}

// runLoop calls bpf_loop(n, sym, &block) for the block at scratch offset
// blk.
func (f *fn) runLoop(sym string, blk uint32, n operand) {
	f.emit(asm.Mov.Reg(asm.R0, regScratch), asm.Add.Imm(asm.R0, int32(blk)), asm.StoreMem(asm.R10, stackMisc, asm.R0, asm.DWord))
	f.call(asm.FnLoop, n, operand{kind: opFunc, name: sym}, operand{kind: opStack, imm: stackMisc}, imm(0))
}

// needFunc adds the function sym, built by build, to the program once.
func (g *gen) needFunc(sym string, build func() asm.Instructions) {
	for _, fn := range g.spec.Funcs {
		if len(fn) > 0 && fn[0].Symbol() == sym {
			return
		}
	}
	g.spec.Funcs = append(g.spec.Funcs, build())
}

// cleanpath returns a cleaned copy of the path s (consumed).
func (f *fn) cleanpath(s asm.Register) asm.Register {
	g := f.g
	g.needFunc(cpFunc, g.cleanpathCallback)
	f.checkNotNull(s)
	bsize, src, out, _ := g.cleanpathBlock()
	blk := f.tmp(bsize)
	for i := uint32(0); i < cpHdr; i += 8 {
		f.emit(storeImm(regScratch, int16(blk+i), 0, asm.DWord))
	}
	f.emit(storeImm(regScratch, int16(blk+src+1), 0, asm.Byte))
	f.call(asm.FnProbeReadKernelStr, scr(blk+src), imm(int64(g.opts.StrSize+1)), reg(s))
	n := f.alloc()
	empty, rel, fin := f.label("cpempty"), f.label("cprel"), f.label("cpfin")
	f.emit(asm.Mov.Reg(n, asm.R0), asm.Add.Imm(n, -1), asm.JSLE.Imm(n, 0, empty),
		asm.StoreMem(regScratch, int16(blk+cpN), n, asm.DWord))
	// A rooted path starts the output with its '/'.
	c := f.alloc()
	f.emit(asm.LoadMem(c, regScratch, int16(blk+src), asm.Byte), asm.JNE.Imm(c, '/', rel),
		storeImm(regScratch, int16(blk+cpRooted), 1, asm.DWord), storeImm(regScratch, int16(blk+cpW), 1, asm.DWord),
		storeImm(regScratch, int16(blk+out), '/', asm.Byte))
	f.mark(rel)
	f.free(c)
	f.emit(asm.JSGT.Imm(n, int32(g.opts.StrSize), empty), asm.Add.Imm(n, 1))
	f.runLoop(cpFunc, blk, reg(n))
	// Terminate the output; an empty result is ".".
	w := f.alloc()
	dot := f.label("cpdot")
	f.emit(asm.LoadMem(w, regScratch, int16(blk+cpW), asm.DWord), asm.JSLE.Imm(w, 0, dot),
		asm.JSGT.Imm(w, int32(g.opts.StrSize), dot))
	p := f.alloc()
	f.scratchPtr(p, blk+out)
	f.emit(asm.Add.Reg(p, w), storeImm(p, 0, 0, asm.Byte), asm.Ja.Label(fin))
	f.free(p, w)
	f.mark(dot)
	f.emit(storeImm(regScratch, int16(blk+out), '.', asm.Half), asm.Ja.Label(fin))
	f.mark(empty)
	f.emit(storeImm(regScratch, int16(blk+out), 0, asm.Byte))
	f.mark(fin)
	return f.strResult(blk + out)
}
