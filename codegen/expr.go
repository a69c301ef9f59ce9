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
	h := asm.FnProbeReadKernelStr
	if user {
		h = asm.FnProbeReadUserStr
	}
	f.call(h, scr(off), imm(int64(f.g.opts.StrSize+1)), reg(r))
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
	f.call(readHelper(user), scr(off), imm(int64(size)), reg(r))
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

func (f *fn) unary(e *syntax.UnaryExpr) asm.Register {
	t := f.typeOf(e)
	switch e.Op {
	case syntax.SUB:
		r := f.expr(e.X)
		f.emit(asm.Neg.Imm(r, 0))
		return r
	case syntax.ADD:
		return f.expr(e.X)
	case syntax.BNEG:
		r := f.expr(e.X)
		f.emit(asm.Xor.Imm(r, -1))
		return r
	case syntax.NOT:
		r := f.cond(e.X)
		l := f.label("not")
		d := f.alloc()
		f.emit(asm.Mov.Imm(d, 1), asm.JEq.Imm(r, 0, l), asm.Mov.Imm(d, 0))
		f.mark(l)
		f.free(r)
		return d
	case syntax.MUL:
		if r, ok := f.xlateWhole(e.X, t); ok {
			return r
		}
		pt := f.typeOf(e.X)
		r := f.expr(e.X)
		f.checkAlign(r, t)
		return f.loadScalar(r, t, pt.User)
	case syntax.AND:
		return f.addrOf(e.X)
	case syntax.INC, syntax.DEC:
		return f.incdec(e.X, e.Op, false)
	}
	f.fail(e, "unary operator %v is not supported", e.Op)
	return 0
}

// addrOf computes the address of an lvalue (&p->m, &a[i], &*p, &x of
// a global or clause-local variable or a kernel symbol) as a plain
// number: D pointers are integers to the verifier, and stores through
// them are checked (storeAddr).
func (f *fn) addrOf(e syntax.Expr) asm.Register {
	switch x := e.(type) {
	case *syntax.ParenExpr:
		return f.addrOf(x.X)
	case *syntax.Ident, *syntax.ScopedVar:
		if v := f.g.info.VarOf(x); v != nil {
			switch v.Kind {
			case VarGlobal:
				p := f.gvars()
				if off := f.g.gvars[v.ID]; off != 0 {
					f.emit(asm.Add.Imm(p, int32(off)))
				}
				f.launder(p)
				return p
			case VarClause:
				p := f.alloc()
				f.scratchPtr(p, f.g.thisVars[v.ID])
				f.launder(p)
				return p
			case VarSymbol:
				return f.symbolAddr(x, v)
			}
		}
	case *syntax.UnaryExpr:
		if x.Op == syntax.MUL {
			return f.expr(x.X)
		}
	case *syntax.MemberExpr:
		if x.Arrow {
			fl := f.fieldOf(x, f.typeOf(x.X).Elem)
			r := f.expr(x.X)
			if fl.Offset != 0 {
				f.emit(asm.Add.Imm(r, int32(fl.Offset)))
			}
			return r
		}
		st := f.typeOf(x.X)
		fl, _ := fieldOf(st, x.Name.Name)
		r := f.addrOf(x.X)
		if fl.Offset != 0 {
			f.emit(asm.Add.Imm(r, int32(fl.Offset)))
		}
		return r
	case *syntax.IndexExpr:
		bt := f.typeOf(x.X)
		if bt.Kind == program.TPointer || bt.Kind == program.TArray {
			var base asm.Register
			if bt.Kind == program.TPointer {
				base = f.expr(x.X)
			} else {
				base = f.addrOf(x.X)
			}
			i := f.expr(x.Index[0])
			f.emit(asm.Mul.Imm(i, int32(bt.Elem.Size)), asm.Add.Reg(base, i))
			f.free(i)
			return base
		}
	}
	f.fail(e, "cannot take the address of this expression")
	return 0
}

// checkAlign faults with "invalid alignment" (illval = the address in
// a) when a scalar of type t read or written through a pointer (*p,
// p[i]) would not be aligned to its size, as DTrace requires.
func (f *fn) checkAlign(a asm.Register, t *program.Type) {
	size := storeSize(t)
	if byRef(t) || size <= 1 || size&(size-1) != 0 {
		return
	}
	m := f.alloc()
	ok := f.label("algn")
	f.emit(asm.Mov.Reg(m, a))
	f.launder(m) // a may be a pointer the verifier tracks ((int *)array)
	f.emit(asm.And.Imm(m, int32(size-1)), asm.JEq.Imm(m, 0, ok))
	f.fault(abi.FltBadAlign, a, true)
	f.mark(ok)
	f.free(m)
}

func (f *fn) binary(e *syntax.BinaryExpr) asm.Register {
	switch e.Op {
	case syntax.COMMA:
		r := f.expr(e.X)
		f.free(r)
		return f.expr(e.Y)
	case syntax.LAND, syntax.LOR:
		// The result goes to y's register, which is free on the path
		// that skips Y too (it was free when x was), so a chain of
		// && and || holds one register however long it is.
		one, zero, end := f.label("scone"), f.label("sczero"), f.label("scend")
		x := f.cond(e.X)
		if e.Op == syntax.LAND {
			f.emit(asm.JEq.Imm(x, 0, zero))
		} else {
			f.emit(asm.JNE.Imm(x, 0, one))
		}
		f.free(x)
		y := f.cond(e.Y)
		f.emit(asm.JEq.Imm(y, 0, zero))
		f.mark(one)
		f.emit(asm.Mov.Imm(y, 1), asm.Ja.Label(end))
		f.mark(zero)
		f.emit(asm.Mov.Imm(y, 0))
		f.mark(end)
		return y
	case syntax.LXOR:
		hx := f.hold(f.bool(e.X), e.Y)
		y := f.bool(e.Y)
		x := f.release(hx)
		f.emit(asm.Xor.Reg(x, y))
		f.free(y)
		return x
	case syntax.EQL, syntax.NEQ, syntax.LSS, syntax.GTR, syntax.LEQ, syntax.GEQ:
		return f.compare(e)
	}
	tx, ty, t := f.typeOf(e.X), f.typeOf(e.Y), f.typeOf(e)
	hx := f.hold(f.expr(e.X), e.Y)
	y := f.expr(e.Y)
	x := f.release(hx)
	f.arithOp(e, e.Op, x, y, tx, ty, t)
	f.free(y)
	return x
}

// bool compiles e to 0 or 1.
func (f *fn) bool(e syntax.Expr) asm.Register {
	r := f.cond(e)
	l := f.label("b")
	f.emit(asm.JEq.Imm(r, 0, l), asm.Mov.Imm(r, 1))
	f.mark(l)
	return r
}

// arithOp computes x = x op y for values of types tx, ty with result
// type t, including pointer arithmetic and the divide-by-zero check.
func (f *fn) arithOp(n syntax.Node, op syntax.Token, x, y asm.Register, tx, ty, t *program.Type) {
	if t.Kind == program.TPointer || tx.Kind == program.TPointer || ty.Kind == program.TPointer {
		f.ptrArith(n, op, x, y, tx, ty, t)
		return
	}
	// As in DTrace, arithmetic runs on the 64-bit register values as
	// loaded (sign- or zero-extended by their types); only casts, stores
	// and records truncate. The result type picks signed or unsigned
	// division, modulus and right shift.
	alu, plain := plainALU[op]
	switch {
	case plain:
	case op == syntax.QUO || op == syntax.REM:
		ok := f.label("dz")
		f.emit(asm.JNE.Imm(y, 0, ok))
		f.fault(abi.FltDivZero, 0, false)
		f.mark(ok)
		switch {
		case op == syntax.QUO && t.Signed && !f.g.isaV4():
			f.signedDiv(x, y)
			return
		case op == syntax.QUO && t.Signed:
			alu = asm.SDiv
		case op == syntax.QUO:
			alu = asm.Div
		case t.Signed:
			f.signedMod(x, y)
			return
		default:
			alu = asm.Mod
		}
	case op == syntax.SHR:
		if t.Signed {
			alu = asm.ArSh
		} else {
			alu = asm.RSh
		}
	default:
		f.fail(n, "operator %v is not supported", op)
	}
	f.emit(alu.Reg(x, y))
}

// plainALU are the operators that are one ALU instruction whatever the
// signedness.
var plainALU = map[syntax.Token]asm.ALUOp{
	syntax.ADD: asm.Add, syntax.SUB: asm.Sub, syntax.MUL: asm.Mul,
	syntax.AND: asm.And, syntax.OR: asm.Or, syntax.XOR: asm.Xor, syntax.SHL: asm.LSh,
}

// compareJumps are the jumps taken when a comparison holds, for unsigned
// and signed operands.
var compareJumps = map[syntax.Token][2]asm.JumpOp{
	syntax.EQL: {asm.JEq, asm.JEq}, syntax.NEQ: {asm.JNE, asm.JNE},
	syntax.LSS: {asm.JLT, asm.JSLT}, syntax.GTR: {asm.JGT, asm.JSGT},
	syntax.LEQ: {asm.JLE, asm.JSLE}, syntax.GEQ: {asm.JGE, asm.JSGE},
}

// signedMod computes x %= y the way DTrace's BPF code does: the
// remainder of the magnitudes, negated when exactly one operand is
// negative (so 19 % -5 is -4, unlike C).
func (f *fn) signedMod(x, y asm.Register) { f.signedOp(asm.Mod, "sm", x, y) }

// signedDiv computes x /= y (y non-zero) without ISA v4's signed
// division: the quotient of the magnitudes, negated when exactly one
// operand is negative. It truncates toward zero and gives INT64_MIN for
// INT64_MIN / -1, as BPF_SDIV does.
func (f *fn) signedDiv(x, y asm.Register) { f.signedOp(asm.Div, "sd", x, y) }

// signedOp applies the unsigned op to the magnitudes of x and y and
// negates the result when exactly one of them is negative; its labels
// start with prefix.
func (f *fn) signedOp(op asm.ALUOp, prefix string, x, y asm.Register) {
	neg := f.alloc()
	l1, l2, l3 := f.label(prefix+"x"), f.label(prefix+"y"), f.label(prefix+"r")
	f.emit(asm.Mov.Imm(neg, 0), asm.JSGE.Imm(x, 0, l1), asm.Neg.Imm(x, 0), asm.Xor.Imm(neg, 1))
	f.mark(l1)
	f.emit(asm.JSGE.Imm(y, 0, l2), asm.Neg.Imm(y, 0), asm.Xor.Imm(neg, 1))
	f.mark(l2)
	f.emit(op.Reg(x, y), asm.JEq.Imm(neg, 0, l3), asm.Neg.Imm(x, 0))
	f.mark(l3)
	f.free(neg)
}

// signedDivImm is signedDiv by a positive constant.
func (f *fn) signedDivImm(x asm.Register, s int32) {
	pos, done := f.label("sdp"), f.label("sdd")
	f.emit(asm.JSGE.Imm(x, 0, pos), asm.Neg.Imm(x, 0), asm.Div.Imm(x, s), asm.Neg.Imm(x, 0), asm.Ja.Label(done))
	f.mark(pos)
	f.emit(asm.Div.Imm(x, s))
	f.mark(done)
}

func (f *fn) ptrArith(n syntax.Node, op syntax.Token, x, y asm.Register, tx, ty, t *program.Type) {
	elem := func(p *program.Type) int32 {
		if p.Elem == nil || p.Elem.Size == 0 {
			return 1
		}
		return int32(p.Elem.Size)
	}
	switch {
	case op == syntax.SUB && tx.Kind == program.TPointer && ty.Kind == program.TPointer:
		f.emit(asm.Sub.Reg(x, y))
		if s := elem(tx); s != 1 && f.g.isaV4() {
			f.emit(asm.SDiv.Imm(x, s))
		} else if s != 1 {
			f.signedDivImm(x, s)
		}
	case (op == syntax.ADD || op == syntax.SUB) && tx.Kind == program.TPointer:
		if s := elem(tx); s != 1 {
			f.emit(asm.Mul.Imm(y, s))
		}
		if op == syntax.ADD {
			f.emit(asm.Add.Reg(x, y))
		} else {
			f.emit(asm.Sub.Reg(x, y))
		}
	case op == syntax.ADD && ty.Kind == program.TPointer:
		if s := elem(ty); s != 1 {
			f.emit(asm.Mul.Imm(x, s))
		}
		f.emit(asm.Add.Reg(x, y))
	default:
		// Integer operations on pointer values (masking, ...).
		f.arithOp(n, op, x, y, program.TypeULong, program.TypeULong, program.TypeULong)
	}
}

// charString reports whether a value of type t compares as a string
// with a string: a string, or a char array or pointer (psinfo_t's
// pr_fname == "sleep"), as in DTrace.
func charString(t *program.Type) bool {
	if t.IsString() {
		return true
	}
	if t == nil || t.User || t.Kind != program.TArray && t.Kind != program.TPointer {
		return false
	}
	return t.Elem != nil && t.Elem.Kind == program.TInt && t.Elem.Size == 1 && (t.Elem.Char || t.Elem.Name == "char")
}

// compare compiles a comparison of integers, pointers or strings.
func (f *fn) compare(e *syntax.BinaryExpr) asm.Register {
	tx, ty := f.typeOf(e.X), f.typeOf(e.Y)
	hx := f.hold(f.expr(e.X), e.Y)
	y := f.expr(e.Y)
	x := f.release(hx)
	signed := false
	if (tx.IsString() || ty.IsString()) && charString(tx) && charString(ty) {
		c := f.strcmp(x, y)
		x = c
		y = f.alloc()
		f.emit(asm.Mov.Imm(y, 0))
		signed = true
	} else if tx.Kind == program.TInt && ty.Kind == program.TInt {
		// Values compare as they are in registers; the usual arithmetic
		// conversions only choose signed or unsigned comparison.
		signed = arith(tx, ty).Signed
	}
	jumps := compareJumps[e.Op]
	j := jumps[0]
	if signed {
		j = jumps[1]
	}
	// The result replaces x, so a comparison needs no third register.
	t, end := f.label("cmpt"), f.label("cmp")
	f.emit(j.Reg(x, y, t), asm.Mov.Imm(x, 0), asm.Ja.Label(end))
	f.mark(t)
	f.emit(asm.Mov.Imm(x, 1))
	f.mark(end)
	f.free(y)
	return x
}

func (f *fn) ternary(e *syntax.CondExpr) asm.Register {
	// Nested ?: chains must not hold a result register per level: the
	// true branch ends with a move whose destination is patched once the
	// false branch has picked its register (both paths are disjoint, so
	// the register is free on the true path too).
	c := f.cond(e.Cond)
	els, end := f.label("else"), f.label("fi")
	f.emit(asm.JEq.Imm(c, 0, els))
	f.free(c)
	x := f.expr(e.X)
	patch := len(f.insns)
	f.emit(asm.Mov.Reg(x, x), asm.Ja.Label(end))
	f.free(x)
	f.mark(els)
	y := f.expr(e.Y)
	f.insns[patch].Dst = y
	f.mark(end)
	return y
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
