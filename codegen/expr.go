package codegen

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// This file compiles expressions. expr leaves the value of an expression
// in a fresh pool register: integers and pointers normalized to 64 bits
// (sign- or zero-extended from their type's size), and strings, structs
// and arrays as a pointer to their bytes.

func (f *fn) fail(n syntax.Node, format string, args ...any) {
	f.bail(&Error{Pos: n.Pos(), Err: fmt.Errorf(format, args...)})
}

// typeOf returns the checked type of e, defaulting to int.
func (f *fn) typeOf(e syntax.Expr) *program.Type {
	if t := f.g.info.TypeOf(e); t != nil {
		return t
	}
	return program.TypeInt
}

// tmp allocates size bytes of scratch for the current statement.
func (f *fn) tmp(size uint32) uint32 {
	off := f.temp
	f.temp += align8(size)
	if f.temp > f.g.tempMax {
		f.g.tempMax = f.temp
	}
	return off
}

// normalize truncates r to t's size and extends it by t's signedness.
func (f *fn) normalize(r asm.Register, t *program.Type) {
	if t == nil || t.Kind != program.TInt {
		return
	}
	switch t.Size {
	case 1:
		if t.Signed {
			f.signExtend(r, 1)
		} else {
			f.emit(asm.And.Imm(r, 0xff))
		}
	case 2:
		if t.Signed {
			f.signExtend(r, 2)
		} else {
			f.emit(asm.And.Imm(r, 0xffff))
		}
	case 4:
		if t.Signed {
			f.signExtend(r, 4)
		} else {
			f.emit(asm.Mov.Reg32(r, r))
		}
	}
}

// promote applies C's integer promotions.
func promote(t *program.Type) *program.Type {
	if t.Kind == program.TInt && t.Size < 4 {
		return program.TypeInt
	}
	return t
}

// arith is the common type of two integer operands as dtrace computes
// it (dt_type_promote): no promotion to int, the wider operand wins, at
// equal width the unsigned one.
func arith(a, b *program.Type) *program.Type {
	if a.Kind != program.TInt {
		return a
	}
	if b.Kind != program.TInt {
		return b
	}
	switch {
	case a.Size > b.Size:
		return a
	case b.Size > a.Size:
		return b
	case !a.Signed:
		return a
	}
	return b
}

// constant reports e's value if the checker folded it.
func (f *fn) constant(e syntax.Expr) (int64, bool) {
	if t := f.g.info.TypeOf(e); t != nil && t.Kind != program.TInt && t.Kind != program.TPointer {
		return 0, false
	}
	return f.g.info.ConstOf(e)
}

// expr compiles e and returns the register holding its value.
func (f *fn) expr(e syntax.Expr) asm.Register {
	save := f.pos
	f.pos = e.Pos()
	defer func() { f.pos = save }()
	// An integer result cannot point into the temporaries its evaluation
	// used, so they are free again afterwards.
	if t := f.g.info.TypeOf(e); t != nil && t.Kind == program.TInt {
		mark := f.temp
		defer func() { f.temp = max(mark, f.tempBase) }()
	}
	if x := f.g.info.Expand(e); x != nil {
		r := f.expr(x)
		f.convert(r, f.typeOf(x), f.typeOf(e))
		return r
	}
	if s, ok := f.g.info.StrConstOf(e); ok {
		return f.stringLit(s)
	}
	if v, ok := f.constant(e); ok {
		// A folded constant keeps the 64 bits dtrace folds it in
		// (dt_node_op2 does not truncate to the result type): what
		// stores or records it narrows it, an aggregation or a wider
		// conversion sees it whole.
		r := f.alloc()
		f.movImm(r, v)
		return r
	}
	switch e := e.(type) {
	case *syntax.ParenExpr:
		return f.expr(e.X)
	case *syntax.IntLit:
		r := f.alloc()
		f.movImm(r, int64(e.Value))
		f.normalize(r, f.typeOf(e))
		return r
	case *syntax.StringLit:
		return f.stringLit(e.Value)
	case *syntax.Ident, *syntax.ScopedVar:
		v := f.g.info.VarOf(e)
		if v == nil {
			f.fail(e, "unresolved identifier")
		}
		return f.loadVar(e, v)
	case *syntax.UnaryExpr:
		return f.unary(e)
	case *syntax.PostfixExpr:
		return f.incdec(e.X, e.Op, true)
	case *syntax.BinaryExpr:
		return f.binary(e)
	case *syntax.AssignExpr:
		return f.assign(e)
	case *syntax.CondExpr:
		return f.ternary(e)
	case *syntax.CastExpr:
		r := f.expr(e.X)
		to := f.typeOf(e)
		if to.Kind == program.TString && !f.typeOf(e.X).IsString() {
			return f.copyStr(r, f.typeOf(e.X).User)
		}
		f.convert(r, f.typeOf(e.X), to)
		return r
	case *syntax.SizeofExpr:
		var t *program.Type
		if e.Type != nil {
			t = f.g.info.TypeOfName(e.Type)
		} else {
			t = f.typeOf(e.X)
		}
		r := f.alloc()
		f.movImm(r, int64(t.Size))
		return r
	case *syntax.StringofExpr:
		t := f.typeOf(e.X)
		r := f.expr(e.X)
		if t.IsString() {
			return r
		}
		return f.copyStr(r, t.User)
	case *syntax.CallExpr:
		return f.callExpr(e)
	case *syntax.IndexExpr:
		return f.index(e)
	case *syntax.MemberExpr:
		if r, ok := f.xlateMember(e); ok {
			return r
		}
		return f.member(e)
	case *syntax.XlateExpr:
		t := f.typeOf(e)
		st := t
		if t.Kind == program.TPointer {
			st = t.Elem
		}
		if r, ok := f.xlateWhole(e, st); ok {
			return r
		}
	case *syntax.AggExpr:
		f.fail(e, "aggregations may not be used in expressions")
	}
	f.fail(e, "%T expressions are not supported yet", e)
	return 0
}

// convert changes a value to type to in place: casts, stores and keys
// truncate and re-extend, since arithmetic leaves 64-bit results even in
// narrower types.
func (f *fn) convert(r asm.Register, from, to *program.Type) {
	if to.Kind == program.TInt {
		if from != nil && (from.Kind == program.TPointer || byRef(from)) {
			// A pointer the verifier tracks (curcpu, a variable's
			// storage) becomes a plain number for integer arithmetic.
			f.launder(r)
		}
		f.normalize(r, to)
	}
}

// cond compiles e as a truth value (any non-zero value is true).
func (f *fn) cond(e syntax.Expr) asm.Register {
	t := f.typeOf(e)
	r := f.expr(e)
	if t.IsString() {
		// A string is true when it is neither NULL nor empty.
		b := f.alloc()
		l := f.label("snull")
		f.emit(asm.Mov.Imm(b, 0), asm.JEq.Imm(r, 0, l), asm.LoadMem(b, r, 0, asm.Byte))
		f.mark(l)
		f.free(r)
		return b
	}
	return r
}

func (f *fn) stringLit(s string) asm.Register {
	n := uint32(len(s)) + 1
	if n > f.g.opts.StrSize+1 {
		s = s[:f.g.opts.StrSize]
	}
	off := f.tmp(f.g.strBuf())
	b := append([]byte(s), 0)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	for i := 0; i < len(b); i += 4 {
		v := int32(uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16 | uint32(b[i+3])<<24)
		f.emit(storeImm(regScratch, int16(off)+int16(i), int64(v), asm.Word))
	}
	r := f.alloc()
	f.scratchPtr(r, off)
	return r
}

// emptyStr returns a pointer to an empty string in scratch.
func (f *fn) emptyStr(r asm.Register) {
	off := f.tmp(8)
	f.emit(storeImm(regScratch, int16(off), 0, asm.DWord))
	f.scratchPtr(r, off)
}

// copyStr copies the NUL-terminated string at address r (kernel or user
// memory) into a scratch temporary and returns a pointer to the copy. A
// bad address faults.
func (f *fn) copyStr(r asm.Register, user bool) asm.Register {
	off := f.tmp(f.g.strBuf())
	addr := f.alloc()
	f.emit(asm.Mov.Reg(addr, r))
	f.call(derefHelper(user, true), scr(off), imm(int64(f.g.opts.StrSize+1)), reg(r))
	f.checkRead(addr)
	f.free(addr)
	p := f.alloc()
	f.scratchPtr(p, off)
	return p
}

// checkRead faults with "invalid address" (illval = addr) when the last
// helper call returned a negative value.
func (f *fn) checkRead(addr asm.Register) {
	ok := f.label("rdok")
	f.emit(asm.JSGE.Imm(asm.R0, 0, ok))
	f.fault(abi.FltBadAddr, addr, true)
	f.mark(ok)
}

// load reads size bytes at kernel/user address r into a scratch temporary
// and returns a pointer to it; a failed read faults.
func (f *fn) loadBytes(r asm.Register, size uint32, user bool) uint32 {
	if !user {
		f.checkScratchLoad(r, size)
	}
	off := f.tmp(size)
	addr := f.alloc()
	f.emit(asm.Mov.Reg(addr, r))
	f.call(derefHelper(user, false), scr(off), imm(int64(size)), reg(r))
	f.checkRead(addr)
	f.free(addr)
	return off
}

// loadScalar reads a value of type t from memory at address r (consumed).
func (f *fn) loadScalar(r asm.Register, t *program.Type, user bool) asm.Register {
	if byRef(t) {
		if t.Kind == program.TString {
			return f.copyStr(r, user)
		}
		off := f.loadBytes(r, t.Size, user)
		p := f.alloc()
		f.scratchPtr(p, off)
		return p
	}
	size := t.Size
	if t.Kind == program.TPointer {
		size = 8
	}
	off := f.loadBytes(r, size, user)
	v := f.alloc()
	f.loadField(v, regScratch, int16(off), t)
	return v
}

// loadField loads a scalar of type t at base+off (memory the verifier
// can read directly) into v, extended by the type's signedness.
func (f *fn) loadField(v, base asm.Register, off int16, t *program.Type) {
	size := t.Size
	if t.Kind == program.TPointer {
		size = 8
	}
	sz := sizeOf(size)
	switch {
	case t.Kind == program.TInt && t.Signed && size < 8 && f.g.isaV4():
		f.emit(asm.LoadMemSX(v, base, off, sz))
	case t.Kind == program.TInt && t.Signed && size < 8:
		f.emit(asm.LoadMem(v, base, off, sz))
		f.signExtend(v, int(size))
	default:
		f.emit(asm.LoadMem(v, base, off, sz))
	}
}

// fieldOf returns the field of struct or union st that x names; a
// missing one is an error.
func (f *fn) fieldOf(x *syntax.MemberExpr, st *program.Type) program.Field {
	fl, ok := fieldOf(st, x.Name.Name)
	if !ok {
		f.fail(x, "no member %s", x.Name.Name)
	}
	return fl
}

// member compiles x.m and p->m.
func (f *fn) member(e *syntax.MemberExpr) asm.Register {
	xt := f.typeOf(e.X)
	st := xt
	if e.Arrow {
		st = xt.Elem
	}
	if st == nil || st.Kind != program.TStruct {
		f.fail(e, "member of a non-struct")
	}
	fl := f.fieldOf(e, st)
	var base asm.Register
	inMem := false // base points at memory the verifier can read
	if e.Arrow {
		base = f.expr(e.X)
		// As DTrace, p->m with p NULL faults at address 0.
		f.checkNotNull(base)
	} else {
		base = f.expr(e.X) // by-ref: pointer to a copy in scratch
		inMem = true
	}
	if fl.BitSize != 0 {
		return f.bitfield(base, fl, inMem, xt.User)
	}
	if inMem {
		if byRef(fl.Type) {
			f.emit(asm.Add.Imm(base, int32(fl.Offset)))
			return base
		}
		v := f.alloc()
		f.loadField(v, base, int16(fl.Offset), fl.Type)
		f.free(base)
		return v
	}
	if fl.Offset != 0 {
		f.emit(asm.Add.Imm(base, int32(fl.Offset)))
	}
	return f.loadScalar(base, fl.Type, xt.User)
}

// bitUnit is the smallest load that covers a bit-field.
func bitUnit(fl program.Field) *program.Type {
	nbytes := (fl.BitOff + fl.BitSize + 7) / 8
	unit := &program.Type{Kind: program.TInt, Size: 8}
	switch {
	case nbytes <= 1:
		unit.Size = 1
	case nbytes <= 2:
		unit.Size = 2
	case nbytes <= 4:
		unit.Size = 4
	}
	return unit
}

// bitfield extracts a bit-field member.
func (f *fn) bitfield(base asm.Register, fl program.Field, inMem, user bool) asm.Register {
	unit := bitUnit(fl)
	var v asm.Register
	if inMem {
		v = f.alloc()
		f.loadField(v, base, int16(fl.Offset), unit)
		f.free(base)
	} else {
		if fl.Offset != 0 {
			f.emit(asm.Add.Imm(base, int32(fl.Offset)))
		}
		v = f.loadScalar(base, unit, user)
	}
	// Move the field to the top, then shift down with the right sign.
	f.emit(asm.LSh.Imm(v, int32(64-fl.BitOff-fl.BitSize)))
	if fl.Type.Signed {
		f.emit(asm.ArSh.Imm(v, int32(64-fl.BitSize)))
	} else {
		f.emit(asm.RSh.Imm(v, int32(64-fl.BitSize)))
	}
	return v
}

// inlineCall compiles the value of an inline with parameters, each bound
// to its argument expression (evaluated where the parameter is used, as a
// translator's parameter is).
func (f *fn) inlineCall(val syntax.Expr, params []*Var, args []syntax.Expr) asm.Register {
	var r asm.Register
	var bind func(i int)
	bind = func(i int) {
		if i == len(params) {
			r = f.expr(val)
			return
		}
		f.withBind(params[i], args[i], func() { bind(i + 1) })
	}
	bind(0)
	return r
}

// index compiles a[i] for C arrays and pointers, and associative array
// lookups.
func (f *fn) index(e *syntax.IndexExpr) asm.Register {
	if v := f.g.info.VarOf(e.X); v != nil && (v.Kind == VarAssoc || v.Kind == VarTAssoc) {
		return f.assocLoad(e, v)
	}
	if ii, ok := f.g.info.(InlineInfo); ok {
		if val, params, ok := ii.InlineCall(e); ok {
			return f.inlineCall(val, params, e.Index)
		}
	}
	bt := f.typeOf(e.X)
	t := f.typeOf(e)
	if v := f.g.info.VarOf(e.X); v != nil && v.Kind == VarBuiltin {
		if g := varGenOf(v.Name); g != nil && g.index != nil {
			return g.index(f, e)
		}
	}
	switch bt.Kind {
	case program.TString:
		// s[i] reads a character; beyond the string size it faults.
		hb := f.hold(f.expr(e.X), e.Index[0])
		i := f.expr(e.Index[0])
		base := f.release(hb)
		ok, bad, nonnull := f.label("sidx"), f.label("sbad"), f.label("snn")
		// Indexing NULL faults at the address it would read.
		f.emit(asm.JNE.Imm(base, 0, nonnull))
		f.fault(abi.FltBadAddr, i, true)
		f.mark(nonnull)
		f.emit(asm.JGE.Imm(i, int32(f.g.opts.StrSize), bad), asm.Ja.Label(ok))
		f.mark(bad)
		f.fault(abi.FltBadIndex, i, true)
		f.mark(ok)
		f.emit(asm.Add.Reg(base, i))
		f.free(i)
		v := f.alloc()
		f.loadField(v, base, 0, program.TypeChar)
		f.free(base)
		return v
	case program.TPointer:
		p := f.addrOf(e)
		f.checkAlign(p, t)
		return f.loadScalar(p, t, bt.User)
	case program.TArray:
		if bt.Len == 0 {
			// A flexible array member: no bound, read in place.
			p := f.addrOf(e)
			return f.loadScalar(p, t, bt.User)
		}
		base := f.expr(e.X) // pointer to a copy in scratch
		i := f.expr(e.Index[0])
		ok := f.label("idx")
		bad := f.label("badidx")
		f.emit(asm.JGE.Imm(i, int32(bt.Len), bad), asm.Ja.Label(ok))
		f.mark(bad)
		f.fault(abi.FltBadIndex, i, true)
		f.mark(ok)
		f.emit(asm.Mul.Imm(i, int32(bt.Elem.Size)), asm.Add.Reg(base, i))
		f.free(i)
		if byRef(t) {
			return base
		}
		v := f.alloc()
		f.loadField(v, base, 0, t)
		f.free(base)
		return v
	}
	f.fail(e, "cannot index this expression")
	return 0
}
