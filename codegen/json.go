package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/dlang/syntax"
)

// json(s, selector) returns the value the selector names in the JSON
// document s, as illumos's dtrace does: the selector is keys separated by
// '.' with array indexes in brackets ("a.b[2].c", "[0].x"); a string value
// comes back without its quotes and with its escapes as written, a number,
// true, false or null as written, an object or array as its text; NULL when
// the value is absent, the document is malformed before the value, or a
// value on the way is not an object or array.
//
// It is illumos's state machine, run by bpf_loop one step per call of the
// callback dt_json: most steps take one character of the document; a few
// take none (the end of a number or identifier is looked at again in the
// state after it). The call site copies the document and the selector into
// a block in scratch; the first steps split the selector in place into
// NUL-separated elements, one character per step. Where illumos loops
// within a character (skipping to the next selector element, reading an
// array index with strtoll()), the machine has states that take one
// selector character per step instead. A key is compared with the
// selector element as its characters are collected, so that its closing
// quote costs one step too. The output is never longer than the part of
// the document read, so it fits a string.
const (
	jsState    = 0   // the state (js* below)
	jsCur      = 8   // position in the document
	jsDD       = 16  // length of the output
	jsElem     = 24  // offset of the current selector element
	jsNelems   = 32  // selector elements left, the current one included
	jsArrElem  = 40  // the array index wanted
	jsArrPos   = 48  // the index of the array element being read
	jsUni      = 56  // hex digits of a \u escape seen
	jsIsKey    = 64  // the string being read is a key
	jsCollect  = 72  // the string being read is inside a collected object
	jsFound    = 80  // the next value is the one wanted
	jsInArray  = 88  // reading an array
	jsBraces   = 96  // open braces of a collected value
	jsBrackets = 104 // open brackets of a collected value
	jsMis      = 112 // the output differs from the selector element
	jsResult   = 120 // 1 when the output is the result
	jsPos      = 128 // read position in the selector (split, strtoll)
	jsNeg      = 136 // strtoll: a minus sign
	jsPhase    = 144 // strtoll: 0 before the digits, 1 in them
	jsSelLen   = 152 // length of the selector
	jsEE       = 160 // write position of the split
	jsHdr      = 168
	jsonFunc   = "dt_json"
)

// The states: illumos's, then the split of the selector (the first, so
// that a zeroed header starts there), skipping to the next element, and
// reading an array index.
const (
	jsSplit = iota
	jsRest
	jsObject
	jsString
	jsEscape
	jsUnicode
	jsColon
	jsComma
	jsIdent
	jsNumber
	jsFrac
	jsExp
	jsValue
	jsCollectObj
	jsSkipElem
	jsStrtoll
	jsNumStates
)

// jsonBlock returns the size of a call site's block and the offsets of
// the document, the selector (split in place) and the output in it.
func (g *gen) jsonBlock() (size, doc, sel, out uint32) {
	n := g.strBuf()
	doc = jsHdr
	sel = doc + n
	out = sel + n
	return out + n, doc, sel, out
}

// jsonSteps is the bpf_loop count: each document character is read at
// most twice, and the selector's characters a few times.
func (g *gen) jsonSteps() int64 {
	return min(8*(int64(g.opts.StrSize)+2), 1<<23)
}

// jsonCallback builds dt_json(index, ctx): ctx points to a stack slot
// holding the block's address. It returns 1 (stop) when the result is
// known, 0 to go on.
func (g *gen) jsonCallback() asm.Instructions {
	size := int32(g.opts.StrSize)
	_, doc, sel, out := g.jsonBlock()
	f := g.loopCallback(jsonFunc)
	// R6 holds the block; the character read is in cc.
	const blk, cur, cc, t, u, w, x = asm.R6, asm.R7, asm.R8, asm.R9, asm.R1, asm.R2, asm.R3
	adv, stay, fail, done := f.label("adv"), f.label("stay"), f.label("fail"), f.label("done")
	ld := func(r asm.Register, off int16) { f.emit(asm.LoadMem(r, blk, off, asm.DWord)) }
	st := func(off int16, r asm.Register) { f.emit(asm.StoreMem(blk, off, r, asm.DWord)) }
	set := func(off int16, v int64) { f.emit(storeImm(blk, off, v, asm.DWord)) }
	state := func(s int64) { set(jsState, s) }
	// next goes to state s with the next character.
	next := func(s int64) { state(s); f.emit(asm.Ja.Label(adv)) }
	// on jumps to l when cc is one of chars.
	on := func(l string, chars string) {
		for i := 0; i < len(chars); i++ {
			f.emit(asm.JEq.Imm(cc, int32(chars[i]), l))
		}
	}
	// cases runs the first body whose characters cc is one of, in
	// order, and jumps to def when there is none. A body ends in a jump.
	type arm struct {
		chars string
		body  func()
	}
	cases := func(def string, arms ...arm) {
		ls := make([]string, len(arms))
		for i, a := range arms {
			ls[i] = f.label("case")
			on(ls[i], a.chars)
		}
		f.emit(asm.Ja.Label(def))
		for i, a := range arms {
			f.mark(ls[i])
			a.body()
		}
	}
	// inRange jumps to l when lo <= cc <= hi.
	inRange := func(lo, hi byte, l string) {
		f.emit(asm.Mov.Reg(t, cc), asm.Add.Imm(t, -int32(lo)), asm.JLE.Imm(t, int32(hi-lo), l))
	}
	// space jumps to l on an isspace() character.
	space := func(l string) {
		on(l, " ")
		inRange('\t', '\r', l)
	}
	// outside jumps to l unless lo <= r <= hi.
	outside := func(r asm.Register, lo, hi int32, l string) {
		f.emit(asm.JSLT.Imm(r, lo, l), asm.JSGT.Imm(r, hi, l))
	}
	// put appends cc to the output and notes whether it differs from the
	// selector element's character at the same position.
	put := func() {
		skip, same := f.label("putskip"), f.label("putsame")
		ld(w, jsDD)
		outside(w, 0, size-1, skip)
		f.emit(asm.Mov.Reg(u, blk), asm.Add.Reg(u, w), asm.StoreMem(u, int16(out), cc, asm.Byte))
		ld(x, jsElem)
		f.emit(asm.Add.Reg(x, w), asm.Add.Imm(w, 1))
		st(jsDD, w)
		differ := f.label("putdiff")
		outside(x, 0, size, differ)
		f.emit(asm.Add.Reg(x, blk), asm.LoadMem(x, x, int16(sel), asm.Byte), asm.JEq.Reg(x, cc, same))
		f.mark(differ)
		set(jsMis, 1)
		f.mark(same)
		f.mark(skip)
	}
	// putNext appends cc and goes to state s.
	putNext := func(s int64) { put(); next(s) }
	// reset empties the output.
	reset := func() { set(jsDD, 0); set(jsMis, 0) }
	// terminate writes the output's NUL.
	terminate := func() {
		l := f.label("nul")
		ld(w, jsDD)
		outside(w, 0, size, l)
		f.emit(asm.Add.Reg(w, blk), storeImm(w, int16(out), 0, asm.Byte))
		f.mark(l)
	}
	// value ends a scalar value: the result if it is the one wanted and
	// the last selector element, a failure if more elements follow;
	// otherwise the output is emptied for what comes after the value.
	value := func() {
		l := f.label("notfound")
		terminate()
		ld(t, jsFound)
		f.emit(asm.JEq.Imm(t, 0, l))
		ld(t, jsNelems)
		f.emit(asm.JSGT.Imm(t, 1, fail), asm.Ja.Label(done))
		f.mark(l)
		reset()
	}
	// strtoll starts reading the array index at selector offset r.
	strtoll := func(r asm.Register) {
		st(jsPos, r)
		set(jsNeg, 0)
		set(jsPhase, 0)
		set(jsArrElem, 0)
		set(jsArrPos, 0)
		state(jsStrtoll)
	}
	// selChar loads the selector character at offset r (bounded to the
	// buffer, NUL past it) into x.
	selChar := func(r asm.Register) {
		l, end := f.label("selout"), f.label("selend")
		outside(r, 0, size, l)
		f.emit(asm.Mov.Reg(x, blk), asm.Add.Reg(x, r), asm.LoadMem(x, x, int16(sel), asm.Byte), asm.Ja.Label(end))
		f.mark(l)
		f.emit(asm.Mov.Imm(x, 0))
		f.mark(end)
	}
	// selPut stores the byte in r at selector offset jsEE (bounded) and
	// jumps to stay.
	selPut := func(r asm.Register, advance bool) {
		ld(w, jsEE)
		outside(w, 0, size, stay)
		f.emit(asm.Mov.Reg(x, blk), asm.Add.Reg(x, w), asm.StoreMem(x, int16(sel), r, asm.Byte))
		if advance {
			f.emit(asm.Add.Imm(w, 1))
			st(jsEE, w)
		}
		f.emit(asm.Ja.Label(stay))
	}

	labels := make([]string, jsNumStates)
	for i := range labels {
		labels[i] = f.label("st")
	}
	ld(t, jsState)
	for _, s := range []int{jsSplit, jsSkipElem, jsStrtoll} {
		f.emit(asm.JEq.Imm(t, int32(s), labels[s]))
	}
	// The states that read a document character.
	ld(cur, jsCur)
	outside(cur, 0, size-1, fail)
	f.emit(asm.Mov.Reg(u, blk), asm.Add.Reg(u, cur), asm.LoadMem(cc, u, int16(doc), asm.Byte), asm.JEq.Imm(cc, 0, fail))
	for s := jsRest; s < jsSkipElem; s++ {
		f.emit(asm.JEq.Imm(t, int32(s), labels[s]))
	}
	f.emit(asm.Ja.Label(fail))

	// The selector, split in place: '.' and '[' end an element, ']' and
	// a leading '[' are dropped.
	f.mark(labels[jsSplit])
	end, keep := f.label("splitend"), f.label("splitkeep")
	ld(u, jsPos)
	ld(w, jsSelLen)
	f.emit(asm.JSGE.Reg(u, w, end))
	selChar(u)
	f.emit(asm.Mov.Reg(cc, x), asm.Add.Imm(u, 1))
	st(jsPos, u)
	f.emit(asm.JNE.Imm(u, 1, f.pendLabel("notfirst")))
	on(stay, "[")
	f.markPending()
	on(stay, "]")
	cases(keep, arm{".[", func() {
		ld(t, jsNelems)
		f.emit(asm.Add.Imm(t, 1), asm.Mov.Imm(cc, 0))
		st(jsNelems, t)
		f.emit(asm.Ja.Label(keep))
	}})
	f.mark(keep)
	selPut(cc, true)
	f.mark(end)
	state(jsRest)
	f.emit(asm.Mov.Imm(cc, 0))
	selPut(cc, false)

	f.mark(labels[jsRest])
	space(adv)
	cases(fail, arm{"{", func() { next(jsObject) }}, arm{"[", func() {
		set(jsInArray, 1)
		ld(u, jsElem)
		strtoll(u)
		f.emit(asm.Ja.Label(adv))
	}})

	f.mark(labels[jsObject])
	space(adv)
	cases(fail, arm{`"`, func() { set(jsIsKey, 1); next(jsString) }})

	f.mark(labels[jsString])
	plain := f.label("plain")
	cases(plain, arm{`\`, func() { putNext(jsEscape) }}, arm{`"`, func() {
		strEnd, strVal, keyDone := f.label("strend"), f.label("strval"), f.label("keydone")
		ld(t, jsCollect)
		f.emit(asm.JEq.Imm(t, 0, strEnd))
		set(jsCollect, 0)
		putNext(jsCollectObj)
		f.mark(strEnd)
		ld(t, jsIsKey)
		f.emit(asm.JEq.Imm(t, 0, strVal))
		// A key: the one wanted if it matched the element to its end.
		ld(t, jsMis)
		f.emit(asm.JNE.Imm(t, 0, keyDone))
		ld(w, jsDD)
		ld(u, jsElem)
		f.emit(asm.Add.Reg(u, w))
		selChar(u)
		f.emit(asm.JNE.Imm(x, 0, keyDone))
		set(jsFound, 1)
		f.mark(keyDone)
		set(jsIsKey, 0)
		reset()
		next(jsColon)
		f.mark(strVal)
		value()
		next(jsComma)
	}})
	f.mark(plain)
	put()
	f.emit(asm.Ja.Label(adv))

	f.mark(labels[jsEscape])
	put()
	state(jsString)
	f.emit(asm.JNE.Imm(cc, 'u', adv))
	set(jsUni, 0)
	next(jsUnicode)

	f.mark(labels[jsUnicode])
	hex := f.label("hex")
	inRange('0', '9', hex)
	f.emit(asm.Mov.Reg(t, cc), asm.Or.Imm(t, 0x20), asm.Add.Imm(t, -'a'), asm.JGT.Imm(t, 'f'-'a', fail))
	f.mark(hex)
	put()
	ld(t, jsUni)
	f.emit(asm.Add.Imm(t, 1))
	st(jsUni, t)
	f.emit(asm.JNE.Imm(t, 4, adv))
	next(jsString)

	f.mark(labels[jsColon])
	space(adv)
	cases(fail, arm{":", func() { next(jsValue) }})

	f.mark(labels[jsComma])
	space(adv)
	cases(fail, arm{",", func() {
		inObj := f.label("inobj")
		ld(t, jsInArray)
		f.emit(asm.JEq.Imm(t, 0, inObj))
		state(jsValue)
		ld(t, jsArrPos)
		f.emit(asm.Add.Imm(t, 1))
		st(jsArrPos, t)
		ld(u, jsArrElem)
		f.emit(asm.JNE.Reg(t, u, adv))
		set(jsFound, 1)
		f.emit(asm.Ja.Label(adv))
		f.mark(inObj)
		next(jsObject)
	}})

	// true, false, null.
	f.mark(labels[jsIdent])
	notLower, four, five, known := f.label("notlower"), f.label("four"), f.label("five"), f.label("known")
	f.emit(asm.Mov.Reg(t, cc), asm.Add.Imm(t, -'a'), asm.JGT.Imm(t, 'z'-'a', notLower))
	put()
	f.emit(asm.Ja.Label(adv))
	f.mark(notLower)
	ld(w, jsDD)
	f.emit(asm.JEq.Imm(w, 4, four), asm.JEq.Imm(w, 5, five), asm.Ja.Label(fail))
	word := func(s string) int32 {
		return int32(uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24)
	}
	f.mark(four)
	f.emit(asm.LoadMem(t, blk, int16(out), asm.Word), asm.JEq.Imm(t, word("true"), known),
		asm.JEq.Imm(t, word("null"), known), asm.Ja.Label(fail))
	f.mark(five)
	f.emit(asm.LoadMem(t, blk, int16(out), asm.Word), asm.JNE.Imm(t, word("fals"), fail),
		asm.LoadMem(t, blk, int16(out)+4, asm.Byte), asm.JNE.Imm(t, 'e', fail))
	f.mark(known)
	value()
	state(jsComma)
	f.emit(asm.Ja.Label(stay))

	// Numbers: illumos's three states falling through one another.
	f.mark(labels[jsNumber])
	on(fail, "xX")
	cases(labels[jsFrac], arm{".", func() { putNext(jsFrac) }})
	f.mark(labels[jsFrac])
	on(fail, "+-")
	cases(labels[jsExp], arm{"eE", func() { putNext(jsExp) }})
	f.mark(labels[jsExp])
	digit := f.label("digit")
	on(digit, "+-")
	inRange('0', '9', digit)
	value()
	state(jsComma)
	f.emit(asm.Ja.Label(stay))
	f.mark(digit)
	put()
	f.emit(asm.Ja.Label(adv))

	f.mark(labels[jsValue])
	space(adv)
	num, ident := f.label("num"), f.label("ident")
	inRange('0', '9', num)
	inRange('a', 'z', ident)
	cases(fail, arm{"{[", func() {
		// Into the object or array the selector goes on in, or collect
		// it whole.
		collect := f.label("collect")
		ld(t, jsNelems)
		f.emit(asm.JSLE.Imm(t, 1, collect))
		ld(u, jsFound)
		f.emit(asm.JEq.Imm(u, 0, collect), asm.Add.Imm(t, -1))
		st(jsNelems, t)
		f.emit(asm.Mov.Imm(t, 0), asm.JNE.Imm(cc, '[', f.pendLabel("notarr")), asm.Mov.Imm(t, 1))
		f.markPending()
		st(jsInArray, t)
		reset()
		next(jsSkipElem)
		f.mark(collect)
		brace, opened := f.label("brace"), f.label("opened")
		f.emit(asm.Mov.Imm(t, 1), asm.JNE.Imm(cc, '[', brace))
		st(jsBrackets, t)
		f.emit(asm.Ja.Label(opened))
		f.mark(brace)
		st(jsBraces, t)
		f.mark(opened)
		putNext(jsCollectObj)
	}}, arm{`"`, func() { next(jsString) }}, arm{"-", func() { f.emit(asm.Ja.Label(num)) }})
	f.mark(num)
	putNext(jsNumber)
	f.mark(ident)
	putNext(jsIdent)

	// An object or array collected whole, for the result or to skip it.
	f.mark(labels[jsCollectObj])
	put()
	balance := f.label("balance")
	count := func(off int16, d int32) func() {
		return func() {
			ld(t, off)
			if d < 0 {
				f.emit(asm.JEq.Imm(t, 0, fail))
			}
			f.emit(asm.Add.Imm(t, d))
			st(off, t)
			f.emit(asm.Ja.Label(balance))
		}
	}
	cases(balance, arm{`"`, func() { set(jsCollect, 1); next(jsString) }},
		arm{"]", count(jsBrackets, -1)}, arm{"}", count(jsBraces, -1)},
		arm{"{", count(jsBraces, 1)}, arm{"[", count(jsBrackets, 1)})
	f.mark(balance)
	ld(t, jsBrackets)
	ld(u, jsBraces)
	f.emit(asm.Or.Reg(t, u), asm.JNE.Imm(t, 0, adv))
	ld(t, jsFound)
	skipped := f.label("skipped")
	f.emit(asm.JEq.Imm(t, 0, skipped))
	terminate()
	f.emit(asm.Ja.Label(done))
	f.mark(skipped)
	reset()
	next(jsComma)

	// Past the selector element's NUL to the next element.
	f.mark(labels[jsSkipElem])
	ld(u, jsElem)
	selChar(u)
	f.emit(asm.Add.Imm(u, 1))
	st(jsElem, u)
	f.emit(asm.JNE.Imm(x, 0, stay))
	ld(t, jsInArray)
	toObj := f.label("toobj")
	f.emit(asm.JEq.Imm(t, 0, toObj))
	strtoll(u)
	f.emit(asm.Ja.Label(stay))
	f.mark(toObj)
	set(jsFound, 0)
	state(jsObject)
	f.emit(asm.Ja.Label(stay))

	// The array index: strtoll(element, 10), one character a step.
	f.mark(labels[jsStrtoll])
	ld(u, jsPos)
	selChar(u)
	digits, ws, finish := f.label("digits"), f.label("ws"), f.label("finish")
	ld(t, jsPhase)
	f.emit(asm.JNE.Imm(t, 0, digits), asm.JEq.Imm(x, ' ', ws), asm.JEq.Imm(x, '\t', ws))
	set(jsPhase, 1)
	f.emit(asm.JEq.Imm(x, '+', ws), asm.JNE.Imm(x, '-', stay))
	set(jsNeg, 1)
	f.mark(ws)
	f.emit(asm.Add.Imm(u, 1))
	st(jsPos, u)
	f.emit(asm.Ja.Label(stay))
	f.mark(digits)
	f.emit(asm.Add.Imm(x, -'0'), asm.JGT.Imm(x, 9, finish))
	ld(t, jsArrElem)
	f.emit(asm.Mul.Imm(t, 10), asm.Add.Reg(t, x), asm.Add.Imm(u, 1))
	st(jsArrElem, t)
	st(jsPos, u)
	f.emit(asm.Ja.Label(stay))
	f.mark(finish)
	ld(t, jsArrElem)
	ld(w, jsNeg)
	f.emit(asm.JEq.Imm(w, 0, f.pendLabel("pos")), asm.Neg.Imm(t, 0))
	f.markPending()
	st(jsArrElem, t)
	f.emit(asm.Mov.Imm(w, 0), asm.JNE.Imm(t, 0, f.pendLabel("nonzero")), asm.Mov.Imm(w, 1))
	f.markPending()
	st(jsFound, w)
	state(jsValue)
	f.emit(asm.Ja.Label(stay))

	f.mark(adv)
	f.emit(asm.Add.Imm(cur, 1))
	st(jsCur, cur)
	f.mark(stay)
	f.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	f.mark(done)
	set(jsResult, 1)
	f.mark(fail)
	f.emit(asm.Mov.Imm(asm.R0, 1), asm.Return())
	return f.insns
}

// subrJSON compiles json().
func (f *fn) subrJSON(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 2, 2)
	a := f.evalArgs(c, 2)
	return f.json(a[0], a[1])
}

// json returns the value the selector sel names in the document doc, or
// NULL (both registers consumed; NULL arguments fault).
func (f *fn) json(doc, sel asm.Register) asm.Register {
	g := f.g
	g.needFunc(jsonFunc, g.jsonCallback)
	f.checkNotNull(doc)
	f.checkNotNull(sel)
	bsize, docOff, selOff, out := g.jsonBlock()
	blk := f.tmp(bsize)
	for i := uint32(0); i < jsHdr; i += 8 {
		f.emit(storeImm(regScratch, int16(blk+i), 0, asm.DWord))
	}
	f.emit(storeImm(regScratch, int16(blk+jsNelems), 1, asm.DWord))
	f.call(asm.FnProbeReadKernelStr, scr(blk+selOff), imm(int64(g.opts.StrSize+1)), reg(sel))
	f.emit(asm.Add.Imm(asm.R0, -1), asm.JSGE.Imm(asm.R0, 0, f.pendLabel("jslen")), asm.Mov.Imm(asm.R0, 0))
	f.markPending()
	f.emit(asm.StoreMem(regScratch, int16(blk+jsSelLen), asm.R0, asm.DWord))
	f.call(asm.FnProbeReadKernelStr, scr(blk+docOff), imm(int64(g.opts.StrSize+1)), reg(doc))
	f.runLoop(jsonFunc, blk, imm(g.jsonSteps()))
	r := f.alloc()
	none := f.label("jsnone")
	f.emit(asm.LoadMem(r, regScratch, int16(blk+jsResult), asm.DWord), asm.JEq.Imm(r, 0, none))
	f.scratchPtr(r, blk+out)
	f.mark(none)
	return r
}
