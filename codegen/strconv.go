package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
)

// This file compiles the subroutines that convert between strings and
// integers or change a string's case: toupper(), tolower(), strtoll()
// and lltostr() with a base, as illumos's dtrace does them. Every loop
// counts up from a constant so that verifiers without bpf_loop (6.1)
// walk it a bounded number of times, and positions found by one loop
// reach the next through scratch memory, so that the code after a loop
// is verified once rather than once per position.

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
	f.convert(r, f.typeOf(c.Args[i]), TypeLong)
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

// subrStrtoll compiles strtoll(s [, base]): leading blanks and tabs are
// skipped, then a sign, then with base 16 a "0x" or "0X" before a hex
// digit; digits (letters from 10 up) are read until the first that is
// not one in the base. Overflow wraps, as in illumos.
func (f *fn) subrStrtoll(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 1, 2)
	s, base := f.withBase(c)
	n := int32(f.g.opts.StrSize)
	// Room past the string for the two bytes of look-ahead of "0x".
	off := f.strCopy(s, f.g.strBuf()+8)
	st := f.tmp(24) // position, negative flag, base
	pos, neg, bslot := int16(st), int16(st+8), int16(st+16)
	f.emit(asm.StoreMem(regScratch, bslot, base, asm.DWord), storeImm(regScratch, neg, 0, asm.DWord))
	f.free(base)
	i, p, b, v := f.alloc(), f.alloc(), f.alloc(), f.alloc()

	// Blanks and tabs.
	loop, done, adv := f.label("slws"), f.label("slwsdone"), f.label("slwsadv")
	f.emit(asm.Mov.Imm(i, 0))
	f.mark(loop)
	f.exitIf(asm.JGE.Imm(i, n, done))
	f.scratchPtr(p, off)
	f.emit(asm.Add.Reg(p, i), asm.LoadMem(b, p, 0, asm.Byte),
		asm.JEq.Imm(b, ' ', adv), asm.JNE.Imm(b, '\t', done))
	f.mark(adv)
	f.emit(asm.Add.Imm(i, 1), asm.Ja.Label(loop))
	f.mark(done)
	f.emit(asm.StoreMem(regScratch, pos, i, asm.DWord))

	// The sign, then the hex prefix, at the position found.
	f.loadPos(i, pos, n)
	f.scratchPtr(p, off)
	f.emit(asm.Add.Reg(p, i), asm.LoadMem(b, p, 0, asm.Byte))
	minus, signed, nosign := f.label("slminus"), f.label("slsigned"), f.label("slnosign")
	f.emit(asm.JEq.Imm(b, '-', minus), asm.JNE.Imm(b, '+', nosign), asm.Ja.Label(signed))
	f.mark(minus)
	f.emit(storeImm(regScratch, neg, 1, asm.DWord))
	f.mark(signed)
	f.emit(asm.Add.Imm(i, 1), asm.Add.Imm(p, 1), asm.LoadMem(b, p, 0, asm.Byte))
	f.mark(nosign)
	nohex := f.label("slnohex")
	f.emit(asm.LoadMem(v, regScratch, bslot, asm.DWord), asm.JNE.Imm(v, 16, nohex),
		asm.JNE.Imm(b, '0', nohex),
		asm.LoadMem(b, p, 1, asm.Byte), asm.Or.Imm(b, 0x20), asm.JNE.Imm(b, 'x', nohex),
		asm.LoadMem(b, p, 2, asm.Byte))
	hex := f.label("slhex")
	f.emit(asm.JLT.Imm(b, '0', nohex), asm.JLE.Imm(b, '9', hex),
		asm.Or.Imm(b, 0x20), asm.JLT.Imm(b, 'a', nohex), asm.JGT.Imm(b, 'f', nohex))
	f.mark(hex)
	f.emit(asm.Add.Imm(i, 2))
	f.mark(nohex)
	f.emit(asm.StoreMem(regScratch, pos, i, asm.DWord))

	// The digits: the loop counts k up from 0 and reads at start + k,
	// start bounded by n in a register, so that the verifier sees the
	// loop end after n turns whatever start is.
	start := f.alloc()
	f.loadPos(start, pos, n)
	f.emit(asm.Mov.Imm(v, 0), asm.Mov.Imm(i, 0))
	loop, done = f.label("sldig"), f.label("sldigdone")
	letter, have := f.label("slletter"), f.label("slhave")
	f.mark(loop)
	f.emit(asm.Mov.Reg(p, start), asm.Add.Reg(p, i))
	f.exitIf(asm.JGE.Imm(p, n, done))
	f.emit(asm.Mov.Reg(b, p))
	f.scratchPtr(p, off)
	f.emit(asm.Add.Reg(p, b), asm.LoadMem(b, p, 0, asm.Byte),
		asm.JLT.Imm(b, '0', letter), asm.JGT.Imm(b, '9', letter),
		asm.Add.Imm(b, -'0'), asm.Ja.Label(have))
	f.mark(letter)
	f.emit(asm.Or.Imm(b, 0x20))
	f.exitIf(asm.JLT.Imm(b, 'a', done))
	f.exitIf(asm.JGT.Imm(b, 'z', done))
	f.emit(asm.Add.Imm(b, 10-'a'))
	f.mark(have)
	f.emit(asm.LoadMem(p, regScratch, bslot, asm.DWord))
	f.exitIf(asm.JGE.Reg(b, p, done))
	f.emit(asm.Mul.Reg(v, p), asm.Add.Reg(v, b), asm.Add.Imm(i, 1), asm.Ja.Label(loop))
	f.mark(done)
	pos2 := f.label("slpos")
	f.emit(asm.LoadMem(b, regScratch, neg, asm.DWord), asm.JEq.Imm(b, 0, pos2), asm.Neg.Imm(v, 0))
	f.mark(pos2)
	f.free(i, p, b, start)
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
