package codegen

import (
	"github.com/cilium/ebpf/asm"
	"github.com/dtrace-go/dtrace/internal/abi"
)

// This file holds the string routines the subroutines share: search
// (strchr, strstr), path parts, tokens, substrings, copies, length,
// join, comparison and number to string, each emitted as bounded BPF
// over scratch temporaries.

// strchr returns a pointer to the first (last) c in s, in a copy of s,
// or 0 when there is none. The position found goes through scratch
// memory, whose contents the verifier does not track, so that the code
// after the loop is verified once rather than once per position.
func (f *fn) strchr(s, c asm.Register, last bool) asm.Register {
	n := f.g.strBuf()
	off := f.strCopy(s, n)
	slot := f.tmp(8)
	i, p, b := f.alloc(), f.alloc(), f.alloc()
	loop, done, next := f.label("chloop"), f.label("chdone"), f.label("chnext")
	f.emit(asm.Mov.Imm(i, 0), storeImm(regScratch, int16(slot), 0, asm.DWord))
	f.mark(loop)
	f.exitIf(asm.JGE.Imm(i, int32(n), done))
	f.scratchPtr(p, off)
	f.emit(asm.Add.Reg(p, i), asm.LoadMem(b, p, 0, asm.Byte), asm.JNE.Reg(b, c, next),
		asm.Mov.Reg(p, i), asm.Add.Imm(p, 1), asm.StoreMem(regScratch, int16(slot), p, asm.DWord))
	if !last {
		f.emit(asm.Ja.Label(done))
	}
	f.mark(next)
	f.exitIf(asm.JEq.Imm(b, 0, done))
	f.emit(asm.Add.Imm(i, 1), asm.Ja.Label(loop))
	f.mark(done)
	f.free(i, p, b, c)
	res := f.alloc()
	none := f.label("chnone")
	f.emit(asm.LoadMem(res, regScratch, int16(slot), asm.DWord),
		asm.JEq.Imm(res, 0, none), asm.JGT.Imm(res, int32(n), f.pendLabel("chbad")))
	q := f.alloc()
	f.scratchPtr(q, off-1)
	f.emit(asm.Add.Reg(q, res), asm.Mov.Reg(res, q), asm.Ja.Label(none))
	f.free(q)
	f.markPending()
	f.emit(asm.Mov.Imm(res, 0))
	f.mark(none)
	return res
}

// pathPart implements basename() and dirname() as DTrace does. One
// forward pass over a copy of the path finds the last run of non-slash
// characters (the base: firstbase..lastbase, firstbase -1 when no slash
// precedes it) and the end of the run before it (lastdir); the positions
// live in scratch slots so the verifier does not fork on them.
func (f *fn) pathPart(s asm.Register, dir bool) asm.Register {
	n := f.g.strBuf()
	src := f.strCopy(s, n)
	ln := f.result()
	st := f.tmp(24) // lastbase, firstbase, lastdir
	lastbase, firstbase, lastdir := int16(st), int16(st+8), int16(st+16)
	f.emit(storeImm(regScratch, lastbase, -1, asm.DWord), storeImm(regScratch, firstbase, -1, asm.DWord),
		storeImm(regScratch, lastdir, -1, asm.DWord))
	empty := f.label("ppempty")
	f.emit(asm.Sub.Imm(ln, 1), asm.JSLE.Imm(ln, 0, empty))
	i, ch, prev := f.alloc(), f.alloc(), f.alloc()
	loop, done, next, cont := f.label("pploop"), f.label("ppdone"), f.label("ppnext"), f.label("ppcont")
	f.emit(asm.Mov.Imm(i, 0), asm.Mov.Imm(prev, '/'))
	f.mark(loop)
	f.exitIf(asm.JGE.Imm(i, int32(n-1), done))
	f.exitIf(asm.JGE.Reg(i, ln, done))
	f.scratchPtr(ch, src)
	f.emit(asm.Add.Reg(ch, i), asm.LoadMem(ch, ch, 0, asm.Byte),
		asm.JEq.Imm(ch, '/', next),
		asm.JNE.Imm(prev, '/', cont),
		// A new run of non-slash characters starts at i.
		asm.LoadMem(asm.R0, regScratch, lastbase, asm.DWord),
		asm.StoreMem(regScratch, lastdir, asm.R0, asm.DWord),
		storeImm(regScratch, firstbase, -1, asm.DWord),
		asm.JEq.Imm(i, 0, cont),
		asm.StoreMem(regScratch, firstbase, i, asm.DWord))
	f.mark(cont)
	f.emit(asm.StoreMem(regScratch, lastbase, i, asm.DWord))
	f.mark(next)
	f.emit(asm.Mov.Reg(prev, ch), asm.Add.Imm(i, 1), asm.Ja.Label(loop))
	f.mark(done)
	f.free(i, ch, prev)
	// start and end of the result, in src; R0 is a temporary.
	start, end := f.alloc(), f.alloc()
	dot, cp := f.label("ppdot"), f.label("ppcopy")
	f.emit(asm.LoadMem(end, regScratch, lastbase, asm.DWord), asm.LoadMem(start, regScratch, firstbase, asm.DWord))
	allSlash := f.label("ppslash")
	f.emit(asm.JSLT.Imm(end, 0, allSlash))
	if dir {
		// No slash before the base: ".". Else up to lastdir (0 for "/x").
		f.emit(asm.JSLT.Imm(start, 0, dot), asm.LoadMem(end, regScratch, lastdir, asm.DWord),
			asm.Mov.Imm(start, 0), asm.JSGE.Imm(end, 0, cp), asm.Mov.Imm(end, 0), asm.Ja.Label(cp))
	} else {
		f.emit(asm.JSGE.Imm(start, 0, cp), asm.Mov.Imm(start, 0), asm.Ja.Label(cp))
	}
	f.mark(allSlash)
	f.emit(asm.Mov.Imm(start, 0), asm.Mov.Imm(end, 0), asm.Ja.Label(cp))
	f.mark(empty)
	f.mark(dot)
	f.free(ln)
	// "." written over the copy, then taken as the whole result.
	f.emit(storeImm(regScratch, int16(src), '.', asm.Half), asm.Mov.Imm(start, 0), asm.Mov.Imm(end, 0))
	f.mark(cp)
	// Bounds for the verifier: 0 <= start <= end < strsize.
	size := int32(f.g.opts.StrSize)
	fix := f.label("ppfix")
	f.emit(asm.Sub.Reg(end, start), asm.Add.Imm(end, 2),
		asm.JSLT.Imm(start, 0, fix), asm.JSGE.Imm(start, size, fix),
		asm.JSLT.Imm(end, 1, fix), asm.JSGT.Imm(end, size+1, fix), asm.Ja.Label(f.pendLabel("ppok")))
	f.mark(fix)
	f.emit(asm.Mov.Imm(start, 0), asm.Mov.Imm(end, 1))
	f.markPending()
	return f.copyPart(src, start, end, f.alloc(), n)
}

// copyPart copies the string of length-1 bytes at start in the string
// at scratch offset src into a new string buffer of n bytes and returns
// a pointer to it. p is a free register the copy uses; start, length and
// p are consumed.
func (f *fn) copyPart(src uint32, start, length, p asm.Register, n uint32) asm.Register {
	dst := f.tmp(n)
	f.emit(storeImm(regScratch, int16(dst), 0, asm.Byte))
	f.scratchPtr(p, src)
	f.emit(asm.Add.Reg(p, start))
	f.free(start)
	f.call(asm.FnProbeReadKernelStr, scr(dst), reg(length), reg(p))
	r := f.alloc()
	f.scratchPtr(r, dst)
	return r
}

// strtok implements DTrace's strtok(): a non-NULL s is copied into the
// tok buffer and tokenizing starts at its beginning; NULL continues
// where the last call stopped (position kept in mstate). The delimiters
// become a 256-bit map, so each scan is a single loop.
func (f *fn) strtok(s, delim asm.Register) asm.Register {
	g := f.g
	ms := int16(g.layout.MState)
	n := g.strBuf()
	size := int32(g.opts.StrSize)
	tok, tmap := g.tok, g.tok+n
	f.checkNotNull(delim)
	// NULL continues the string taken apart last; there must be one.
	cont, have := f.label("tkcont"), f.label("tkhave")
	f.emit(asm.JNE.Imm(s, 0, have), asm.LoadMem(asm.R0, regScratch, ms+msStrtok, asm.DWord), asm.JNE.Imm(asm.R0, 0, cont))
	f.fault(abi.FltBadAddr, s, true)
	f.mark(have)
	f.call(asm.FnProbeReadKernelStr, scr(tok), imm(int64(g.opts.StrSize+1)), reg(s))
	f.emit(storeImm(regScratch, ms+msStrtok, 1, asm.DWord))
	f.mark(cont)
	f.free(s)
	for i := uint32(0); i < 32; i += 8 {
		f.emit(storeImm(regScratch, int16(tmap+i), 0, asm.DWord))
	}
	dcopy := f.tmp(n)
	f.call(asm.FnProbeReadKernelStr, scr(dcopy), imm(int64(g.opts.StrSize+1)), reg(delim))
	i, c, p := f.alloc(), f.alloc(), f.alloc()
	// Delimiter map: tmap[c>>3] |= 1 << (c&7).
	l1, d1 := f.label("tkmap"), f.label("tkmapd")
	f.emit(asm.Mov.Imm(i, 0))
	f.mark(l1)
	f.exitIf(asm.JGE.Imm(i, size, d1))
	f.scratchPtr(p, dcopy)
	f.emit(asm.Add.Reg(p, i), asm.LoadMem(c, p, 0, asm.Byte))
	f.exitIf(asm.JEq.Imm(c, 0, d1))
	f.emit(asm.Mov.Reg(p, c), asm.RSh.Imm(p, 3), asm.And.Imm(c, 7),
		asm.Mov.Imm(asm.R0, 1), asm.LSh.Reg(asm.R0, c), asm.Mov.Reg(c, p))
	f.scratchPtr(p, tmap)
	f.emit(asm.Add.Reg(p, c), asm.LoadMem(c, p, 0, asm.Byte), asm.Or.Reg(c, asm.R0), asm.StoreMem(p, 0, c, asm.Byte),
		asm.Add.Imm(i, 1), asm.Ja.Label(l1))
	f.mark(d1)
	// inMap leaves in R0 whether character c is a delimiter.
	inMap := func() {
		f.emit(asm.Mov.Reg(asm.R0, c), asm.RSh.Imm(asm.R0, 3))
		f.scratchPtr(p, tmap)
		f.emit(asm.Add.Reg(p, asm.R0), asm.LoadMem(asm.R0, p, 0, asm.Byte),
			asm.Mov.Reg(p, c), asm.And.Imm(p, 7), asm.RSh.Reg(asm.R0, p), asm.And.Imm(asm.R0, 1))
	}
	// scan advances i while inMap's answer, tested by stop, keeps it
	// on: at loop, out of it to end, or to out at the string's end or
	// NUL.
	scan := func(loop, end, out string, stop asm.JumpOp) {
		f.mark(loop)
		f.exitIf(asm.JSGE.Imm(i, size, out))
		f.scratchPtr(p, tok)
		f.emit(asm.Add.Reg(p, i), asm.LoadMem(c, p, 0, asm.Byte))
		f.exitIf(asm.JEq.Imm(c, 0, out))
		inMap()
		f.exitIf(stop.Imm(asm.R0, 0, end))
		f.emit(asm.Add.Imm(i, 1), asm.Ja.Label(loop))
		f.mark(end)
	}
	// Skip leading delimiters from the saved position.
	null, l2, d2 := f.label("tknull"), f.label("tkskip"), f.label("tkskipd")
	f.emit(asm.LoadMem(i, regScratch, ms+msStrtok, asm.DWord), asm.JEq.Imm(i, 0, null), asm.Add.Imm(i, -1),
		asm.JSLT.Imm(i, 0, null))
	scan(l2, d2, null, asm.JEq)
	// The token runs from start to the next delimiter or NUL.
	start := f.tmp(8)
	f.emit(asm.StoreMem(regScratch, int16(start), i, asm.DWord))
	l3, d3 := f.label("tktok"), f.label("tktokd")
	scan(l3, d3, d3, asm.JNE)
	// Save the position (+1) and copy the token.
	f.emit(asm.Mov.Reg(c, i), asm.Add.Imm(c, 1), asm.StoreMem(regScratch, ms+msStrtok, c, asm.DWord),
		asm.LoadMem(c, regScratch, int16(start), asm.DWord), asm.StoreMem(regScratch, int16(start), i, asm.DWord),
		asm.LoadMem(i, regScratch, int16(start), asm.DWord))
	// i = end, c = start (both laundered: plain numbers); length+1 = i-c+1.
	bad := f.label("tkbad")
	f.emit(asm.JSLT.Imm(c, 0, bad), asm.JSGE.Imm(c, size, bad), asm.Sub.Reg(i, c), asm.Add.Imm(i, 1),
		asm.JSLT.Imm(i, 1, bad), asm.JSGT.Imm(i, size+1, bad))
	r := f.copyPart(tok, c, i, p, n)
	done := f.label("tkdone")
	f.emit(asm.Ja.Label(done))
	f.mark(bad)
	f.mark(null)
	f.emit(storeImm(regScratch, ms+msStrtok, 0, asm.DWord), asm.Mov.Imm(r, 0))
	f.mark(done)
	return r
}

// substr implements substr(s, index, remaining) with dtrace's clamping
// of a negative index, a negative length and the string size.
func (f *fn) substr(s, idx, rem asm.Register) asm.Register {
	size := int32(f.g.opts.StrSize)
	n := f.g.strBuf()
	src := f.strCopy(s, n)
	ln := f.result()
	l1 := f.label("ssl")
	f.emit(asm.Sub.Imm(ln, 1), asm.JSGE.Imm(ln, 0, l1), asm.Mov.Imm(ln, 0))
	f.mark(l1)
	// if index < 0 { index += len; if index < 0 && index+rem > 0 { rem += index; index = 0 } }
	nonneg, chk := f.label("ssnn"), f.label("sschk")
	f.emit(asm.JSGE.Imm(idx, 0, nonneg), asm.Add.Reg(idx, ln), asm.JSGE.Imm(idx, 0, nonneg),
		asm.Mov.Reg(asm.R0, idx), asm.Add.Reg(asm.R0, rem), asm.JSLE.Imm(asm.R0, 0, nonneg),
		asm.Add.Reg(rem, idx), asm.Mov.Imm(idx, 0))
	f.mark(nonneg)
	// if index >= len || index < 0 { rem = 0 } else if rem < 0 { rem += len - index }
	// else if index+rem > size { rem = size - index }
	zero, copyL := f.label("sszero"), f.label("sscopy")
	f.emit(asm.JSGE.Reg(idx, ln, zero), asm.JSLT.Imm(idx, 0, zero), asm.JSGE.Imm(rem, 0, chk),
		asm.Add.Reg(rem, ln), asm.Sub.Reg(rem, idx), asm.Ja.Label(copyL))
	f.mark(chk)
	f.emit(asm.Mov.Reg(asm.R0, idx), asm.Add.Reg(asm.R0, rem), asm.JSLE.Imm(asm.R0, size, copyL),
		asm.Mov.Imm(rem, size), asm.Sub.Reg(rem, idx), asm.Ja.Label(copyL))
	f.mark(zero)
	f.emit(asm.Mov.Imm(rem, 0))
	f.mark(copyL)
	f.free(ln)
	// Bound both for the verifier: 0 <= index < strsize, 0 <= rem <= strsize.
	okr, oki := f.label("ssokr"), f.label("ssoki")
	f.emit(asm.JSGE.Imm(rem, 0, f.pendLabel("ssrp")), asm.Mov.Imm(rem, 0))
	f.markPending()
	f.emit(asm.JLE.Imm(rem, size, okr), asm.Mov.Imm(rem, size))
	f.mark(okr)
	f.emit(asm.JSGE.Imm(idx, 0, f.pendLabel("ssip")), asm.Mov.Imm(idx, 0))
	f.markPending()
	f.emit(asm.JLT.Imm(idx, size, oki), asm.Mov.Imm(idx, 0))
	f.mark(oki)
	dst := f.tmp(n)
	f.emit(storeImm(regScratch, int16(dst), 0, asm.Byte))
	p := f.alloc()
	f.scratchPtr(p, src)
	f.emit(asm.Add.Reg(p, idx), asm.Add.Imm(rem, 1))
	f.free(idx)
	f.call(asm.FnProbeReadKernelStr, scr(dst), reg(rem), reg(p))
	r := f.alloc()
	f.scratchPtr(r, dst)
	return r
}

// checkNotNull faults with "invalid address" (illval 0) when the string
// or pointer argument in r is NULL, as DTrace's string subroutines do.
func (f *fn) checkNotNull(r asm.Register) {
	ok := f.label("nn")
	f.emit(asm.JNE.Imm(r, 0, ok))
	f.fault(abi.FltBadAddr, r, true)
	f.mark(ok)
}

// strCopy copies string s (consumed) into a fresh scratch buffer of
// size bytes, returning the buffer offset; R0 holds the helper result
// (length including the NUL).
func (f *fn) strCopy(s asm.Register, size uint32) uint32 {
	f.checkNotNull(s)
	off := f.tmp(size)
	f.call(asm.FnProbeReadKernelStr, scr(off), imm(int64(f.g.opts.StrSize+1)), reg(s))
	return off
}

func (f *fn) strlen(s asm.Register) asm.Register {
	f.strCopy(s, f.g.strBuf())
	r := f.result()
	ok := f.label("slen")
	f.emit(asm.Sub.Imm(r, 1), asm.JSGE.Imm(r, 0, ok), asm.Mov.Imm(r, 0))
	f.mark(ok)
	return r
}

func (f *fn) strjoin(a, b asm.Register) asm.Register {
	f.checkNotNull(a)
	f.checkNotNull(b)
	size := f.g.opts.StrSize + 1
	// Twice the size, so that the second copy, at a variable offset,
	// stays within bounds the verifier can see.
	off := f.tmp(2 * f.g.strBuf())
	f.call(asm.FnProbeReadKernelStr, scr(off), imm(int64(size)), reg(a))
	n := f.result()
	ok := f.label("sj")
	f.emit(asm.Sub.Imm(n, 1), asm.JSGE.Imm(n, 0, ok), asm.Mov.Imm(n, 0))
	f.mark(ok)
	f.emit(asm.JLE.Imm(n, int32(size-1), f.pendLabel("sjc")), asm.Mov.Imm(n, int32(size-1)))
	f.markPending()
	// dst = scratch + off + n; room = size - n.
	dst := f.alloc()
	f.scratchPtr(dst, off)
	f.emit(asm.Add.Reg(dst, n))
	room := f.alloc()
	f.emit(asm.Mov.Imm(room, int32(size)), asm.Sub.Reg(room, n))
	f.free(n)
	f.call(asm.FnProbeReadKernelStr, reg(dst), reg(room), reg(b))
	f.emit(storeImm(regScratch, int16(off+size-1), 0, asm.Byte))
	r := f.alloc()
	f.scratchPtr(r, off)
	return r
}

// strcmp compares two strings and returns <0, 0 or >0 in a register.
// Both are copied into the zeroed buffers strA and strB and compared
// eight bytes at a time (byte-swapped, so that an unsigned comparison of
// words orders like the bytes): the verifier walks strsize/8 iterations
// instead of strsize.
func (f *fn) strcmp(x, y asm.Register) asm.Register {
	g := f.g
	n := g.strBuf()
	for i := uint32(0); i < n; i += 8 {
		f.emit(storeImm(regScratch, int16(g.strA+i), 0, asm.DWord), storeImm(regScratch, int16(g.strB+i), 0, asm.DWord))
	}
	f.call(asm.FnProbeReadKernelStr, scr(g.strA), imm(int64(g.opts.StrSize+1)), reg(x))
	f.call(asm.FnProbeReadKernelStr, scr(g.strB), imm(int64(g.opts.StrSize+1)), reg(y))
	// R0 is free between helper calls: it holds constants and the result.
	d := asm.R0
	i, a, b := f.alloc(), f.alloc(), f.alloc()
	loop, done, diff := f.label("scloop"), f.label("scdone"), f.label("scdiff")
	f.emit(asm.Mov.Imm(i, 0), asm.Mov.Imm(d, 0))
	f.mark(loop)
	f.exitIf(asm.JGE.Imm(i, int32(n), done))
	f.scratchPtr(a, g.strA)
	f.emit(asm.Add.Reg(a, i), asm.LoadMem(a, a, 0, asm.DWord))
	f.scratchPtr(b, g.strB)
	f.emit(asm.Add.Reg(b, i), asm.LoadMem(b, b, 0, asm.DWord),
		asm.JNE.Reg(a, b, diff),
		// Equal words holding a NUL end the comparison: the strings match.
		asm.Mov.Reg(b, a))
	f.movImm(d, 0x0101010101010101)
	f.emit(asm.Sub.Reg(b, d), asm.Xor.Imm(a, -1), asm.And.Reg(b, a))
	f.movImm(d, -0x7f7f7f7f7f7f7f80) // 0x8080808080808080
	f.emit(asm.And.Reg(b, d), asm.Mov.Imm(d, 0))
	f.exitIf(asm.JNE.Imm(b, 0, done))
	f.emit(asm.Add.Imm(i, 8), asm.Ja.Label(loop))
	f.mark(diff)
	f.emit(asm.HostTo(asm.BE, a, asm.DWord), asm.HostTo(asm.BE, b, asm.DWord),
		asm.Mov.Imm(d, -1), asm.JLT.Reg(a, b, done), asm.Mov.Imm(d, 1))
	f.mark(done)
	f.free(i, a, b)
	return f.result()
}

// lltostr formats a signed 64-bit value in decimal.
func (f *fn) lltostr(v asm.Register) asm.Register {
	const n = 24
	off := f.tmp(n)
	// Digits are written backwards from the end of the buffer.
	neg, p, d := f.alloc(), f.alloc(), f.alloc()
	f.emit(storeImm(regScratch, int16(off+n-1), 0, asm.Byte))
	f.scratchPtr(p, off+n-1)
	f.emit(asm.Mov.Imm(neg, 0))
	pos := f.label("llpos")
	f.emit(asm.JSGE.Imm(v, 0, pos), asm.Mov.Imm(neg, 1))
	f.mark(pos)
	var ends []string
	for i := 0; i < 20; i++ {
		// Work with the magnitude as unsigned: -MIN wraps to itself, and
		// the unsigned division of the negated value is right.
		if i == 0 {
			l := f.label("llabs")
			f.emit(asm.JEq.Imm(neg, 0, l), asm.Neg.Imm(v, 0))
			f.mark(l)
		}
		f.emit(asm.Mov.Reg(d, v), asm.Mod.Imm(d, 10), asm.Add.Imm(d, '0'),
			asm.Add.Imm(p, -1), asm.StoreMem(p, 0, d, asm.Byte),
			asm.Div.Imm(v, 10))
		if i < 19 {
			l := f.label("lldig")
			ends = append(ends, l)
			f.emit(asm.JEq.Imm(v, 0, l))
		}
	}
	for _, l := range ends {
		f.mark(l)
	}
	// Launder the digit count through scratch memory so that the code
	// after this is verified once, not once per possible length.
	slot := f.tmp(8)
	f.scratchPtr(d, off+n-1)
	f.emit(asm.Sub.Reg(d, p), asm.StoreMem(regScratch, int16(slot), d, asm.DWord),
		asm.LoadMem(d, regScratch, int16(slot), asm.DWord),
		asm.JLE.Imm(d, 20, f.pendLabel("lllen")), asm.Mov.Imm(d, 20))
	f.markPending()
	// p = end - d, written as base + (20 - d): the verifier wants
	// variable offsets to be non-negative. 20 - d is a subtraction from
	// a constant, not neg and add: verifiers before 6.13 or so know
	// nothing of a negated register's bounds (6.1 and 6.12 refused it).
	e := f.alloc()
	f.emit(asm.Mov.Imm(e, 20), asm.Sub.Reg(e, d))
	f.scratchPtr(p, off+n-1-20)
	f.emit(asm.Add.Reg(p, e))
	f.free(v, d, e)
	l := f.label("llnosign")
	f.emit(asm.JEq.Imm(neg, 0, l), asm.Add.Imm(p, -1), storeImm(p, 0, '-', asm.Byte))
	f.mark(l)
	f.free(neg)
	return p
}
