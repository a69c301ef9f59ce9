package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// This file compiles the subroutines that convert between strings and
// integers or change a string's case: toupper(), tolower(), strtoll()
// and lltostr() with a base, as illumos's dtrace does them. strtoll()
// scans with bpf_loop (below); the other loops count up from a constant,
// so that the verifier walks them a bounded number of times, and
// positions found by one loop reach the next through scratch memory, so
// that the code after a loop is verified once rather than once per
// position.

// maxBase is the largest base of strtoll() and lltostr(): digits and
// the 26 letters.
const maxBase = 36

// subrCase compiles toupper(), tolower(): a copy of the string with
// ASCII letters of the other case converted.
func (f *fn) subrCase(c *syntax.CallExpr, name string) asm.Register {
	s := f.onlyArg(c)
	n := f.g.strBuf()
	off := f.strCopy(s, n)
	lo, hi, delta := int32('a'), int32('z'), int32('A'-'a')
	if name == "tolower" {
		lo, hi, delta = 'A', 'Z', 'a'-'A'
	}
	i, p, b := f.alloc(), f.alloc(), f.alloc()
	loop, done, next := f.label("csloop"), f.label("csdone"), f.label("csnext")
	f.emit(asm.Mov.Imm(i, 0))
	f.mark(loop)
	f.exitIf(asm.JGE.Imm(i, int32(n), done))
	f.scratchPtr(p, off)
	f.emit(asm.Add.Reg(p, i), asm.LoadMem(b, p, 0, asm.Byte))
	f.exitIf(asm.JEq.Imm(b, 0, done))
	f.emit(asm.JLT.Imm(b, lo, next), asm.JGT.Imm(b, hi, next),
		asm.Add.Imm(b, delta), asm.StoreMem(p, 0, b, asm.Byte))
	f.mark(next)
	f.emit(asm.Add.Imm(i, 1), asm.Ja.Label(loop))
	f.mark(done)
	f.free(i, p, b)
	return f.strResult(off)
}

// baseArg compiles the optional base argument i of strtoll() and
// lltostr() (10 when absent) into a register; a base outside 2..36
// faults with an illegal operation, as in illumos.
func (f *fn) baseArg(c *syntax.CallExpr, i int) asm.Register {
	if len(c.Args) <= i {
		r := f.alloc()
		f.movImm(r, 10)
		return r
	}
	r := f.expr(c.Args[i])
	f.convert(r, f.typeOf(c.Args[i]), program.TypeLong)
	bad, ok := f.label("basebad"), f.label("baseok")
	f.emit(asm.JSLT.Imm(r, 2, bad), asm.JSLE.Imm(r, maxBase, ok))
	f.mark(bad)
	f.fault(abi.FltIllOp, r, true)
	f.mark(ok)
	return r
}

// withBase compiles the first argument of strtoll() or lltostr() and
// the base after it.
func (f *fn) withBase(c *syntax.CallExpr) (first, base asm.Register) {
	first = f.expr(c.Args[0])
	if len(c.Args) < 2 {
		return first, f.baseArg(c, 1)
	}
	h := f.hold(first, c.Args[1])
	base = f.baseArg(c, 1)
	return f.release(h), base
}

// strtoll() runs its scan with bpf_loop: each call of the callback
// dt_strtoll reads one character of a block in scratch (the header, then
// the string) and moves a small state machine on, so that the verifier
// walks the callback once however many strtoll() calls a clause makes.
// Unrolled, each call cost the verifier a fresh walk of a 256-turn loop
// with a branch per character, and twenty in one clause exceeded the
// verifier's limit on pending branches (6.18 reports it as EFAULT).
const (
	stlState  = 0  // stlBlanks, stlSign, stlSkip or stlDigits
	stlNeg    = 8  // nonzero after a '-'
	stlBase   = 16 // the base, 2..36
	stlValue  = 24 // the value so far
	stlSkipTo = 32 // the first digit after a "0x" prefix
	stlHdr    = 40
	stlFunc   = "dt_strtoll"

	stlBlanks = 0 // skipping blanks and tabs
	stlSign   = 1 // past a sign: a "0x" prefix may follow
	stlSkip   = 2 // inside a "0x" prefix
	stlDigits = 3 // reading digits
)

// strtollCallback builds dt_strtoll(index, ctx): ctx points to a stack
// slot holding the block's address. It returns 1 (stop) at the first
// character that is not part of the number, 0 to go on.
func (g *gen) strtollCallback() asm.Instructions {
	n := int32(g.opts.StrSize)
	f := g.loopCallback(stlFunc)
	const (
		blk = asm.R6
		i   = asm.R1
		c   = asm.R2
		st  = asm.R3
		p   = asm.R4
		t   = asm.R5
	)
	next, stop := f.label("next"), f.label("stop")
	sign, prefix, skip, digits := f.label("sign"), f.label("prefix"), f.label("skip"), f.label("digits")
	minus, hex, letter, have := f.label("minus"), f.label("hex"), f.label("letter"), f.label("have")
	// i < n, so that the character and the two after it are in the block.
	f.emit(asm.JGE.Imm(i, n, stop),
		asm.Mov.Reg(p, blk), asm.Add.Reg(p, i), asm.LoadMem(c, p, stlHdr, asm.Byte),
		asm.LoadMem(st, blk, stlState, asm.DWord),
		asm.JEq.Imm(st, stlDigits, digits), asm.JEq.Imm(st, stlSkip, skip), asm.JEq.Imm(st, stlSign, prefix),
		asm.JEq.Imm(c, ' ', next), asm.JEq.Imm(c, '\t', next))
	// The first other character: a sign, or the number itself.
	f.mark(sign)
	f.emit(storeImm(blk, stlState, stlSign, asm.DWord),
		asm.JEq.Imm(c, '-', minus), asm.JEq.Imm(c, '+', next), asm.Ja.Label(prefix))
	f.mark(minus)
	f.emit(storeImm(blk, stlNeg, 1, asm.DWord), asm.Ja.Label(next))
	// Base 16 skips a "0x" or "0X" that a hex digit follows.
	f.mark(prefix)
	f.emit(storeImm(blk, stlState, stlDigits, asm.DWord),
		asm.LoadMem(t, blk, stlBase, asm.DWord), asm.JNE.Imm(t, 16, digits), asm.JNE.Imm(c, '0', digits),
		asm.LoadMem(t, p, stlHdr+1, asm.Byte), asm.Or.Imm(t, 0x20), asm.JNE.Imm(t, 'x', digits),
		asm.LoadMem(t, p, stlHdr+2, asm.Byte),
		asm.JLT.Imm(t, '0', digits), asm.JLE.Imm(t, '9', hex),
		asm.Or.Imm(t, 0x20), asm.JLT.Imm(t, 'a', digits), asm.JGT.Imm(t, 'f', digits))
	f.mark(hex)
	f.emit(asm.Mov.Reg(t, i), asm.Add.Imm(t, 2), asm.StoreMem(blk, stlSkipTo, t, asm.DWord),
		storeImm(blk, stlState, stlSkip, asm.DWord), asm.Ja.Label(next))
	f.mark(skip)
	f.emit(asm.LoadMem(t, blk, stlSkipTo, asm.DWord), asm.JLT.Reg(i, t, next),
		storeImm(blk, stlState, stlDigits, asm.DWord))
	// A digit (letters from 10 up) below the base, or the end.
	f.mark(digits)
	f.emit(asm.JLT.Imm(c, '0', letter), asm.JGT.Imm(c, '9', letter), asm.Add.Imm(c, -'0'), asm.Ja.Label(have))
	f.mark(letter)
	f.emit(asm.Or.Imm(c, 0x20), asm.JLT.Imm(c, 'a', stop), asm.JGT.Imm(c, 'z', stop), asm.Add.Imm(c, 10-'a'))
	f.mark(have)
	f.emit(asm.LoadMem(t, blk, stlBase, asm.DWord), asm.JGE.Reg(c, t, stop),
		asm.LoadMem(st, blk, stlValue, asm.DWord), asm.Mul.Reg(st, t), asm.Add.Reg(st, c),
		asm.StoreMem(blk, stlValue, st, asm.DWord))
	f.mark(next)
	f.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	f.mark(stop)
	f.emit(asm.Mov.Imm(asm.R0, 1), asm.Return())
	return f.insns
}

// subrStrtoll compiles strtoll(s [, base]): leading blanks and tabs are
// skipped, then a sign, then with base 16 a "0x" or "0X" before a hex
// digit; digits (letters from 10 up) are read until the first that is
// not one in the base. Overflow wraps, as in illumos.
func (f *fn) subrStrtoll(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 1, 2)
	g := f.g
	g.needFunc(stlFunc, g.strtollCallback)
	s, base := f.withBase(c)
	f.checkNotNull(s)
	// Room past the string for the two bytes of look-ahead of "0x".
	blk := f.tmp(stlHdr + g.strBuf() + 8)
	f.emit(storeImm(regScratch, int16(blk+stlState), stlBlanks, asm.DWord),
		storeImm(regScratch, int16(blk+stlNeg), 0, asm.DWord),
		asm.StoreMem(regScratch, int16(blk+stlBase), base, asm.DWord),
		storeImm(regScratch, int16(blk+stlValue), 0, asm.DWord))
	f.free(base)
	f.call(asm.FnProbeReadKernelStr, scr(blk+stlHdr), imm(int64(g.opts.StrSize+1)), reg(s))
	f.runLoop(stlFunc, blk, imm(int64(g.opts.StrSize)))
	v, neg := f.alloc(), f.alloc()
	pos := f.label("slpos")
	f.emit(asm.LoadMem(v, regScratch, int16(blk+stlValue), asm.DWord),
		asm.LoadMem(neg, regScratch, int16(blk+stlNeg), asm.DWord), asm.JEq.Imm(neg, 0, pos), asm.Neg.Imm(v, 0))
	f.mark(pos)
	f.free(neg)
	return v
}

// loadPos loads a position laundered through scratch slot into r,
// bounded to n for the verifier.
func (f *fn) loadPos(r asm.Register, slot int16, n int32) {
	f.emit(asm.LoadMem(r, regScratch, slot, asm.DWord), asm.JLE.Imm(r, n, f.pendLabel("posok")), asm.Mov.Imm(r, n))
	f.markPending()
}

// lltostrDigits is the most digits lltostr() writes: 2^64 in binary.
const lltostrDigits = 64

// lltostrBase formats v in base (a register holding 2..36) as illumos's
// lltostr(v, base): base 10 is signed, other bases show the bits as
// unsigned; base 16 has a "0x" prefix and base 8 a leading 0 (zero is
// "0", and "0x0" in base 16). Both registers are consumed.
func (f *fn) lltostrBase(v, base asm.Register) asm.Register {
	// The buffer: 4 bytes for the prefix, the digits, the NUL.
	buf := f.tmp(4 + lltostrDigits + 1)
	end := buf + 4 + lltostrDigits
	st := f.tmp(16) // negative flag, digit count
	neg, cnt := int16(st), int16(st+8)
	f.emit(storeImm(regScratch, int16(end), 0, asm.Byte), storeImm(regScratch, neg, 0, asm.DWord))
	pos := f.label("lbpos")
	f.emit(asm.JNE.Imm(base, 10, pos), asm.JSGE.Imm(v, 0, pos),
		storeImm(regScratch, neg, 1, asm.DWord), asm.Neg.Imm(v, 0))
	f.mark(pos)
	p, d := f.alloc(), f.alloc()
	f.scratchPtr(p, end)
	var ends []string
	// At least one digit, so zero is "0"; unrolled: a loop whose count
	// depends on the value is no loop the verifier can bound.
	for k := 0; k < lltostrDigits; k++ {
		dec := f.label("lbdec")
		f.emit(asm.Mov.Reg(d, v), asm.Mod.Reg(d, base), asm.Add.Imm(d, '0'),
			asm.JLE.Imm(d, '9', dec), asm.Add.Imm(d, 'a'-'0'-10))
		f.mark(dec)
		f.emit(asm.Add.Imm(p, -1), asm.StoreMem(p, 0, d, asm.Byte), asm.Div.Reg(v, base))
		if k < lltostrDigits-1 {
			l := f.label("lbdig")
			ends = append(ends, l)
			f.emit(asm.JEq.Imm(v, 0, l))
		}
	}
	for _, l := range ends {
		f.mark(l)
	}
	f.free(v)
	// Launder the digit count; p = end - count, written as a
	// non-negative variable offset from end - 64 (see lltostr).
	f.scratchPtr(d, end)
	f.emit(asm.Sub.Reg(d, p), asm.StoreMem(regScratch, cnt, d, asm.DWord))
	f.loadPos(d, cnt, lltostrDigits)
	e := f.alloc()
	f.emit(asm.Mov.Imm(e, lltostrDigits), asm.Sub.Reg(e, d))
	f.scratchPtr(p, end-lltostrDigits)
	f.emit(asm.Add.Reg(p, e))
	f.free(e)
	done, not16, not8 := f.label("lbdone"), f.label("lbnot16"), f.label("lbnot8")
	f.emit(asm.JNE.Imm(base, 16, not16),
		asm.Add.Imm(p, -2), storeImm(p, 0, '0', asm.Byte), storeImm(p, 1, 'x', asm.Byte), asm.Ja.Label(done))
	f.mark(not16)
	f.emit(asm.JNE.Imm(base, 8, not8),
		asm.LoadMem(d, p, 0, asm.Byte), asm.JEq.Imm(d, '0', done),
		asm.Add.Imm(p, -1), storeImm(p, 0, '0', asm.Byte), asm.Ja.Label(done))
	f.mark(not8)
	f.emit(asm.LoadMem(d, regScratch, neg, asm.DWord), asm.JEq.Imm(d, 0, done),
		asm.Add.Imm(p, -1), storeImm(p, 0, '-', asm.Byte))
	f.mark(done)
	f.free(d, base)
	return p
}

// constantArg returns the value of argument i of c when it is a
// constant, def when c has no argument i.
func (f *fn) constantArg(c *syntax.CallExpr, i int, def int64) (int64, bool) {
	if len(c.Args) <= i {
		return def, true
	}
	return f.constant(c.Args[i])
}
