package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
)

// This file formats network and link-layer addresses: inet_ntoa(),
// inet_ntoa6(), inet_ntop() and link_ntop(). The input bytes are read
// with bpf_probe_read_kernel into scratch (a bad address faults); the text
// is built in a small scratch buffer (textOut) and then copied into a
// strsize string, which truncates it as every string result is.

// Address families and hardware types, as Linux numbers them.
const (
	afINET                 = 2
	afINET6                = 10
	arphrdEther            = 1
	arphrdInfiniband       = 32
	textOutLen             = 64 // longer than any address text (59 for InfiniBand)
	textOutMask      int32 = textOutLen - 1
)

// textOut appends characters to a scratch buffer. The write position lives
// in a scratch slot and is masked on every store, so each store is within
// bounds for the verifier, and branches that reach the same point with
// different positions leave equivalent register states.
type textOut struct {
	f   *fn
	buf uint32
	pos int16
}

func (f *fn) newTextOut() textOut {
	t := textOut{f: f, buf: f.tmp(textOutLen), pos: int16(f.tmp(8))}
	f.emit(storeImm(regScratch, t.pos, 0, asm.DWord))
	return t
}

// at leaves in p the address of the current position (R0 = position).
func (t textOut) at(p asm.Register) {
	f := t.f
	f.emit(asm.LoadMem(asm.R0, regScratch, t.pos, asm.DWord), asm.And.Imm(asm.R0, textOutMask))
	f.scratchPtr(p, t.buf)
	f.emit(asm.Add.Reg(p, asm.R0))
}

// advOne, as the adv argument of putReg, advances by one.
const advOne = asm.R10

// advance moves the position by adv (a 0/1 register) or by one (advOne).
func (t textOut) advance(adv asm.Register) {
	f := t.f
	if adv != advOne {
		f.emit(asm.Add.Reg(asm.R0, adv))
	} else {
		f.emit(asm.Add.Imm(asm.R0, 1))
	}
	f.emit(asm.StoreMem(regScratch, t.pos, asm.R0, asm.DWord))
}

// putc writes the character ch.
func (t textOut) putc(ch byte) {
	p := t.f.alloc()
	t.at(p)
	t.f.emit(storeImm(p, 0, int64(ch), asm.Byte))
	t.f.free(p)
	t.advance(advOne)
}

// putReg writes the character in c; the position advances by adv (0 or
// 1), or by one when adv is advOne: a character not kept is overwritten
// by the next.
func (t textOut) putReg(c, adv asm.Register) {
	p := t.f.alloc()
	t.at(p)
	t.f.emit(asm.StoreMem(p, 0, c, asm.Byte))
	t.f.free(p)
	t.advance(adv)
}

// nonzero sets a = 1 if a (a small non-negative number) is non-zero, else 0.
func (f *fn) nonzero(a asm.Register) {
	f.emit(asm.Neg.Imm(a, 0), asm.RSh.Imm(a, 63))
}

// hexDigit turns d (0..15) into its lower-case hex digit, without branches.
func (f *fn) hexDigit(d asm.Register) {
	f.emit(asm.Mov.Imm(asm.R0, 9), asm.Sub.Reg(asm.R0, d), asm.RSh.Imm(asm.R0, 63),
		asm.Mul.Imm(asm.R0, 'a'-'0'-10), asm.Add.Reg(d, asm.R0), asm.Add.Imm(d, '0'))
}

// putDec8 writes v (0..255, consumed) in decimal without leading zeros.
func (t textOut) putDec8(v asm.Register) {
	f := t.f
	d, a := f.alloc(), f.alloc()
	// Hundreds, kept when non-zero.
	f.emit(asm.Mov.Reg(d, v), asm.Div.Imm(d, 100), asm.Mov.Reg(a, d))
	f.nonzero(a)
	f.emit(asm.Add.Imm(d, '0'))
	t.putReg(d, a)
	// Tens, kept when they or the hundreds are non-zero.
	f.emit(asm.Mov.Reg(d, v), asm.Div.Imm(d, 10), asm.Mov.Reg(a, v), asm.Div.Imm(a, 100),
		asm.Mod.Imm(d, 10), asm.Or.Reg(a, d))
	f.nonzero(a)
	f.emit(asm.Add.Imm(d, '0'))
	t.putReg(d, a)
	f.emit(asm.Mod.Imm(v, 10), asm.Add.Imm(v, '0'))
	t.putReg(v, advOne)
	f.free(d, a, v)
}

// putHex16 writes w (0..0xffff, consumed) in hex without leading zeros.
func (t textOut) putHex16(w asm.Register) {
	f := t.f
	s, d, a := f.alloc(), f.alloc(), f.alloc()
	f.emit(asm.Mov.Imm(s, 0))
	for shift := int32(12); shift >= 0; shift -= 4 {
		f.emit(asm.Mov.Reg(d, w), asm.RSh.Imm(d, shift), asm.And.Imm(d, 15))
		adv := advOne
		if shift > 0 {
			f.emit(asm.Or.Reg(s, d), asm.Mov.Reg(a, s))
			f.nonzero(a)
			adv = a
		}
		f.hexDigit(d)
		t.putReg(d, adv)
	}
	f.free(s, d, a, w)
}

// putHex8 writes b (0..255, consumed) as two hex digits.
func (t textOut) putHex8(b asm.Register) {
	f := t.f
	d := f.alloc()
	f.emit(asm.Mov.Reg(d, b), asm.RSh.Imm(d, 4))
	f.hexDigit(d)
	t.putReg(d, advOne)
	f.emit(asm.And.Imm(b, 15))
	f.hexDigit(b)
	t.putReg(b, advOne)
	f.free(d, b)
}

// finish terminates the text and copies it into the string at scratch
// offset dst (strsize characters at most).
func (t textOut) finish(dst uint32) {
	f := t.f
	t.putc(0)
	f.emit(storeImm(regScratch, int16(dst), 0, asm.Byte))
	f.call(asm.FnProbeReadKernelStr, scr(dst), imm(int64(f.g.opts.StrSize+1)), scr(t.buf))
}

// putDottedQuad writes the four bytes at scratch offset in as a.b.c.d.
func (t textOut) putDottedQuad(in uint32) {
	f := t.f
	for i := uint32(0); i < 4; i++ {
		if i > 0 {
			t.putc('.')
		}
		v := f.alloc()
		f.emit(asm.LoadMem(v, regScratch, int16(in+i), asm.Byte))
		t.putDec8(v)
	}
}

// inetNtoa formats the IPv4 address at src (consumed) into dst.
func (f *fn) inetNtoa(src asm.Register, dst uint32) {
	in := f.loadBytes(src, 4, false)
	f.free(src)
	t := f.newTextOut()
	t.putDottedQuad(in)
	t.finish(dst)
}

// loadWord16 loads the network-order 16-bit word i of the address at
// scratch offset in into r, in host order.
func (f *fn) loadWord16(r asm.Register, in uint32, i int) {
	f.emit(asm.LoadMem(r, regScratch, int16(in+uint32(2*i)), asm.Half), asm.HostTo(asm.BE, r, asm.Half))
}

// inetNtoa6 formats the IPv6 address at src (consumed) into dst as
// DTrace does: the first longest run of two or more zero words becomes
// "::", words are hex without leading zeros, and an address whose first
// five words are zero is shown as IPv4 (prefixed by "::ffff:" or "::"
// when strict) if the sixth word is 0xffff, or it is 0 and the seventh
// word is non-zero or the last word above 1 (not "::" nor "::1").
func (f *fn) inetNtoa6(src asm.Register, dst uint32, strict bool) {
	in := f.loadBytes(src, 16, false)
	f.free(src)
	t := f.newTextOut()
	st := f.tmp(16) // best run start, best run length
	bsSlot, blSlot := int16(st), int16(st+8)

	v4, v4mapped, v6, done := f.label("n6v4"), f.label("n6mapped"), f.label("n6v6"), f.label("n6done")
	w, a := f.alloc(), f.alloc()
	f.emit(asm.Mov.Imm(a, 0))
	for i := 0; i < 5; i++ {
		f.loadWord16(w, in, i)
		f.emit(asm.Or.Reg(a, w))
	}
	f.emit(asm.JNE.Imm(a, 0, v6))
	f.loadWord16(w, in, 5)
	f.emit(asm.JEq.Imm(w, 0xffff, v4mapped), asm.JNE.Imm(w, 0, v6))
	f.loadWord16(w, in, 6)
	f.emit(asm.JNE.Imm(w, 0, v4))
	f.loadWord16(w, in, 7)
	f.emit(asm.JGT.Imm(w, 1, v4), asm.Ja.Label(v6))
	f.free(w, a)

	// IPv4 in IPv6.
	f.mark(v4mapped)
	if strict {
		for _, c := range []byte("::ffff:") {
			t.putc(c)
		}
	}
	f.emit(asm.Ja.Label(f.pendLabel("n6quad")))
	f.mark(v4)
	if strict {
		t.putc(':')
		t.putc(':')
	}
	f.markPending()
	t.putDottedQuad(in + 12)
	f.emit(asm.Ja.Label(done))

	// The first longest run of zero words (bs, bl), when two or longer.
	f.mark(v6)
	run, bs, bl := f.alloc(), f.alloc(), f.alloc()
	w = f.alloc()
	f.emit(asm.Mov.Imm(run, 0), asm.Mov.Imm(bs, 0), asm.Mov.Imm(bl, 0))
	for i := 0; i < 8; i++ {
		nz, next := f.label("n6nz"), f.label("n6next")
		f.loadWord16(w, in, i)
		f.emit(asm.JNE.Imm(w, 0, nz), asm.Add.Imm(run, 1), asm.JLE.Reg(run, bl, next),
			asm.Mov.Reg(bl, run), asm.Mov.Imm(bs, int32(i+1)), asm.Sub.Reg(bs, run), asm.Ja.Label(next))
		f.mark(nz)
		f.emit(asm.Mov.Imm(run, 0))
		f.mark(next)
	}
	f.emit(asm.JGE.Imm(bl, 2, f.pendLabel("n6run")), asm.Mov.Imm(bl, 0), asm.Mov.Imm(bs, 0))
	f.markPending()
	f.emit(asm.StoreMem(regScratch, bsSlot, bs, asm.DWord), asm.StoreMem(regScratch, blSlot, bl, asm.DWord))
	f.free(run, bs, bl, w)

	// Word i: "::" at the start of the run, nothing inside it, else the
	// word, after a ':' unless it is the first or right after the run.
	for i := 0; i < 8; i++ {
		plain, after, word, next := f.label("n6plain"), f.label("n6after"), f.label("n6word"), f.label("n6wnext")
		b, e := f.alloc(), f.alloc()
		f.emit(asm.LoadMem(b, regScratch, bsSlot, asm.DWord), asm.LoadMem(e, regScratch, blSlot, asm.DWord),
			asm.JEq.Imm(e, 0, plain), asm.JGT.Imm(b, int32(i), plain),
			asm.Add.Reg(e, b), asm.JLE.Imm(e, int32(i), after),
			asm.JNE.Imm(b, int32(i), next))
		t.putc(':')
		t.putc(':')
		f.emit(asm.Ja.Label(next))
		f.mark(after)
		f.emit(asm.JEq.Imm(e, int32(i), word))
		f.free(b, e)
		f.mark(plain)
		if i > 0 {
			t.putc(':')
		}
		f.mark(word)
		w = f.alloc()
		f.loadWord16(w, in, i)
		t.putHex16(w)
		f.mark(next)
	}
	f.mark(done)
	t.finish(dst)
}

// linkNtop formats the hardware address at src (consumed) of type typ
// (consumed; ARPHRD_ETHER: 6 bytes, ARPHRD_INFINIBAND: 20) into dst as
// colon-separated hex bytes. Another type faults with an illegal
// operation.
func (f *fn) linkNtop(typ, src asm.Register, dst uint32) {
	ok, ib, read := f.label("lnok"), f.label("lnib"), f.label("lnread")
	f.emit(asm.JEq.Imm(typ, arphrdEther, ok), asm.JEq.Imm(typ, arphrdInfiniband, ok))
	f.fault(abi.FltIllOp, typ, true)
	f.mark(ok)
	in := f.tmp(24)
	n := f.tmp(8)
	// The byte count goes through scratch; the reads are two calls so
	// that each has a constant size.
	f.emit(asm.JEq.Imm(typ, arphrdInfiniband, ib), storeImm(regScratch, int16(n), 6, asm.DWord))
	f.free(typ)
	f.call(asm.FnProbeReadKernel, scr(in), imm(6), keep(src))
	f.emit(asm.Ja.Label(read))
	f.mark(ib)
	f.emit(storeImm(regScratch, int16(n), 20, asm.DWord))
	f.call(asm.FnProbeReadKernel, scr(in), imm(20), keep(src))
	f.mark(read)
	f.checkRead(src)
	f.free(src)
	t := f.newTextOut()
	end := f.label("lnend")
	for i := uint32(0); i < 20; i++ {
		if i == 6 {
			c := f.alloc()
			f.emit(asm.LoadMem(c, regScratch, int16(n), asm.DWord), asm.JEq.Imm(c, 6, end))
			f.free(c)
		}
		if i > 0 {
			t.putc(':')
		}
		b := f.alloc()
		f.emit(asm.LoadMem(b, regScratch, int16(in+i), asm.Byte))
		t.putHex8(b)
	}
	f.mark(end)
	t.finish(dst)
}
