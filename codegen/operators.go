package codegen

import (
	"github.com/cilium/ebpf/asm"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// This file compiles the operators: unary (\& included: the address of
// an lvalue, with its alignment check), binary (arithmetic on
// integers and pointers, with signed division and modulo by the sign
// of the operands), comparisons (of strings too) and ?:.

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
