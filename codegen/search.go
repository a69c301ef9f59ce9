package codegen

import "github.com/cilium/ebpf/asm"

// The string searches (index, rindex, strstr) run their candidate loop
// with the bpf_loop helper: its callback is verified once, where an
// unrolled bounded loop costs the verifier about 200k instructions per
// call and a clause holds only a few. Each call site lays out a block in
// scratch (searchHdr bytes of header, then the haystack and the needle)
// and passes its address through the stack; the callback dt_search
// compares one candidate position.
const (
	searchLM     = 0  // needle length
	searchLo     = 8  // first candidate
	searchHi     = 16 // last candidate
	searchBack   = 24 // nonzero: from hi down (rindex)
	searchResult = 32 // matching position or -1
	searchHdr    = 40
	searchFunc   = "dt_search"
)

// searchBlock returns the size of a call site's block and the offsets of
// the haystack and needle in it, for the program's strsize.
func (g *gen) searchBlock() (size, hay, ndl uint32) {
	n := g.strBuf()
	hay = searchHdr
	ndl = hay + 2*n + 8
	return ndl + n + 8, hay, ndl
}

// searchCallback builds dt_search(index, ctx): ctx points to a stack slot
// holding the block's address. It returns 1 (stop) on a match or past the
// string, 0 to go on.
func (g *gen) searchCallback() asm.Instructions {
	n := g.strBuf()
	size := int32(g.opts.StrSize)
	_, hay, ndl := g.searchBlock()
	f := g.loopCallback(searchFunc)
	back, have, match, stop := f.label("back"), f.label("have"), f.label("match"), f.label("stop")
	f.emit(
		asm.LoadMem(asm.R0, asm.R6, searchBack, asm.DWord),
		asm.JNE.Imm(asm.R0, 0, back),
		asm.LoadMem(asm.R3, asm.R6, searchLo, asm.DWord),
		asm.Add.Reg(asm.R3, asm.R1),
		asm.Ja.Label(have),
	)
	f.mark(back)
	f.emit(asm.LoadMem(asm.R3, asm.R6, searchHi, asm.DWord), asm.Sub.Reg(asm.R3, asm.R1))
	f.mark(have)
	f.emit(asm.JSLT.Imm(asm.R3, 0, stop), asm.JSGT.Imm(asm.R3, size, stop))
	for w := int32(0); w < int32(n); w += 8 {
		full := f.label("full")
		f.emit(
			// No needle bytes left: a match.
			asm.LoadMem(asm.R0, asm.R6, searchLM, asm.DWord), asm.Add.Imm(asm.R0, -w), asm.JSLE.Imm(asm.R0, 0, match),
			asm.Mov.Reg(asm.R4, asm.R6), asm.Add.Imm(asm.R4, int32(hay)+w), asm.Add.Reg(asm.R4, asm.R3),
			asm.LoadMem(asm.R4, asm.R4, 0, asm.DWord),
			asm.LoadMem(asm.R5, asm.R6, int16(int32(ndl)+w), asm.DWord),
			// Fewer than 8 needle bytes left: compare only those.
			asm.JSGE.Imm(asm.R0, 8, full), asm.LSh.Imm(asm.R0, 3), asm.Neg.Imm(asm.R0, 0), asm.Add.Imm(asm.R0, 64),
			asm.LSh.Reg(asm.R4, asm.R0), asm.RSh.Reg(asm.R4, asm.R0), asm.LSh.Reg(asm.R5, asm.R0), asm.RSh.Reg(asm.R5, asm.R0),
		)
		f.mark(full)
		next := f.label("next")
		f.emit(asm.JEq.Reg(asm.R4, asm.R5, next), asm.Mov.Imm(asm.R0, 0), asm.Return())
		f.mark(next)
	}
	f.mark(match)
	f.emit(asm.StoreMem(asm.R6, searchResult, asm.R3, asm.DWord))
	f.mark(stop)
	f.emit(asm.Mov.Imm(asm.R0, 1), asm.Return())
	return f.insns
}

// loopSearch implements index(), rindex() (with an optional start
// position, clamped to the string as Perl does, except that rindex()
// from a negative position finds only the empty string) and strstr()
// with bpf_loop over the candidate positions.
func (f *fn) loopSearch(s, sub, pos asm.Register, havePos bool, which string) asm.Register {
	g := f.g
	g.needFunc(searchFunc, g.searchCallback)
	f.checkNotNull(s)
	f.checkNotNull(sub)
	size := int32(g.opts.StrSize)
	bsize, hay, ndl := g.searchBlock()
	blk := f.tmp(bsize)
	for i := uint32(0); i < bsize; i += 8 {
		f.emit(storeImm(regScratch, int16(blk+i), 0, asm.DWord))
	}
	if havePos {
		f.emit(asm.StoreMem(regScratch, int16(blk+searchLo), pos, asm.DWord))
		f.free(pos)
	}
	f.call(asm.FnProbeReadKernelStr, scr(blk+ndl), imm(int64(g.opts.StrSize+1)), reg(sub))
	f.emit(asm.Add.Imm(asm.R0, -1), asm.StoreMem(regScratch, int16(blk+searchLM), asm.R0, asm.DWord))
	f.call(asm.FnProbeReadKernelStr, scr(blk+hay), imm(int64(g.opts.StrSize+1)), reg(s))
	ls := f.alloc()
	f.emit(asm.Mov.Reg(ls, asm.R0), asm.Add.Imm(ls, -1))
	// Candidates lo..hi: hi = len(s) - len(sub).
	lo, hi := f.alloc(), f.alloc()
	f.emit(asm.Mov.Reg(hi, ls), asm.LoadMem(asm.R0, regScratch, int16(blk+searchLM), asm.DWord), asm.Sub.Reg(hi, asm.R0),
		asm.Mov.Imm(lo, 0))
	if havePos {
		p := f.alloc()
		f.emit(asm.LoadMem(p, regScratch, int16(blk+searchLo), asm.DWord))
		c1, c2 := f.label("spc1"), f.label("spc2")
		if which == "rindex" {
			// A negative start leaves rindex() nothing to find but the
			// empty string, at 0 (as Perl and DTrace do).
			f.emit(asm.JSGE.Imm(p, 0, c1), asm.Mov.Imm(p, 0),
				asm.LoadMem(asm.R0, regScratch, int16(blk+searchLM), asm.DWord), asm.JEq.Imm(asm.R0, 0, c1),
				asm.Mov.Imm(hi, -1))
		} else {
			f.emit(asm.JSGE.Imm(p, 0, c1), asm.Mov.Imm(p, 0))
		}
		f.mark(c1)
		f.emit(asm.JSLE.Reg(p, ls, c2), asm.Mov.Reg(p, ls))
		f.mark(c2)
		if which == "rindex" {
			l := f.label("sprh")
			f.emit(asm.JSLE.Reg(hi, p, l), asm.Mov.Reg(hi, p))
			f.mark(l)
		} else {
			f.emit(asm.Mov.Reg(lo, p))
		}
		f.free(p)
	}
	f.free(ls)
	back := int64(0)
	if which == "rindex" {
		back = 1
	}
	f.emit(asm.StoreMem(regScratch, int16(blk+searchLo), lo, asm.DWord),
		asm.StoreMem(regScratch, int16(blk+searchHi), hi, asm.DWord),
		storeImm(regScratch, int16(blk+searchBack), back, asm.DWord),
		storeImm(regScratch, int16(blk+searchResult), -1, asm.DWord))
	// Loops: hi - lo + 1 candidates, none when negative.
	skip := f.label("srskip")
	f.emit(asm.Sub.Reg(hi, lo), asm.Add.Imm(hi, 1), asm.JSLE.Imm(hi, 0, skip), asm.JSGT.Imm(hi, size+1, skip))
	f.free(lo)
	f.runLoop(searchFunc, blk, reg(hi))
	f.mark(skip)
	r := f.alloc()
	f.emit(asm.LoadMem(r, regScratch, int16(blk+searchResult), asm.DWord))
	if which != "strstr" {
		return r
	}
	none, end := f.label("ssnone"), f.label("ssend")
	f.emit(asm.JSLT.Imm(r, 0, none), asm.JSGT.Imm(r, size, none))
	q := f.alloc()
	f.scratchPtr(q, blk+hay)
	f.emit(asm.Add.Reg(q, r), asm.Mov.Reg(r, q), asm.Ja.Label(end))
	f.free(q)
	f.mark(none)
	f.emit(asm.Mov.Imm(r, 0))
	f.mark(end)
	return r
}
