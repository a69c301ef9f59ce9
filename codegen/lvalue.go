package codegen

import (
	"github.com/cilium/ebpf/asm"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// This file compiles assignable places: lvalues of every kind of
// variable, members of struct and array variables, memory through
// pointers, and the assignment, compound and ++/-- operators on them.

// lvalue describes an assignable place.
type lvalue struct {
	v   *Var
	idx *syntax.IndexExpr // associative element
	key uint32            // its key, built once
	// mem is set for storage inside a struct or array variable: addr
	// holds a pointer the verifier knows (a map value), field the member
	// (BitSize != 0 for a bit-field) with v.Type its type.
	mem   bool
	addr  asm.Register
	field program.Field
}

func (f *fn) lvalueOf(e syntax.Expr) lvalue {
	e = syntax.Unparen(e)
	if ix, ok := e.(*syntax.IndexExpr); ok {
		if v := f.g.info.VarOf(ix.X); v != nil && (v.Kind == VarAssoc || v.Kind == VarTAssoc) {
			return lvalue{v: v, idx: ix, key: f.assocKeyBuf(ix, v)}
		}
	}
	v := f.g.info.VarOf(e)
	if v == nil {
		switch e.(type) {
		case *syntax.MemberExpr, *syntax.IndexExpr, *syntax.UnaryExpr:
			addr, fl := f.memAddr(e)
			return lvalue{v: &Var{Name: "member", Type: fl.Type}, mem: true, addr: addr, field: fl}
		}
		f.fail(e, "invalid assignment target")
	}
	return lvalue{v: v}
}

// isMemLvalue reports whether lvalueOf(e) designates memory (a member,
// an element of a struct or array, a pointer's target) rather than a
// variable or an associative array element.
func (f *fn) isMemLvalue(e syntax.Expr) bool {
	e = syntax.Unparen(e)
	if ix, ok := e.(*syntax.IndexExpr); ok {
		if v := f.g.info.VarOf(ix.X); v != nil && (v.Kind == VarAssoc || v.Kind == VarTAssoc) {
			return false
		}
	}
	if f.g.info.VarOf(e) != nil {
		return false
	}
	switch e.(type) {
	case *syntax.MemberExpr, *syntax.IndexExpr, *syntax.UnaryExpr:
		return true
	}
	return false
}

// memAddr returns a verifier-known pointer to the storage of a member or
// element of a struct or array variable (global or clause-local), and
// the member it designates (Offset already applied).
func (f *fn) memAddr(e syntax.Expr) (asm.Register, program.Field) {
	e = syntax.Unparen(e)
	switch x := e.(type) {
	case *syntax.Ident, *syntax.ScopedVar:
		v := f.g.info.VarOf(x)
		if v != nil && byRef(v.Type) && (v.Kind == VarGlobal || v.Kind == VarClause) {
			return f.loadVar(x, v), program.Field{Type: v.Type}
		}
		if v != nil && (v.Type.Kind == program.TStruct || v.Type.Kind == program.TArray) && v.Kind == VarThread {
			// A thread-local struct or array is created (zeroed) by
			// the first store into one of its members or elements.
			key := f.tvarKey(v.ID)
			return f.createZeroed(abi.MapTVars, key, f.g.tvarSize, "tvok"), program.Field{Type: v.Type}
		}
	case *syntax.UnaryExpr:
		if x.Op == syntax.MUL {
			t := f.typeOf(x)
			return f.storeAddr(f.expr(x.X), t), program.Field{Type: t}
		}
	case *syntax.MemberExpr:
		if x.Arrow {
			fl := f.fieldOf(x, f.typeOf(x.X).Elem)
			p := f.expr(x.X)
			f.checkNotNull(p)
			if fl.Offset != 0 {
				f.emit(asm.Add.Imm(p, int32(fl.Offset)))
			}
			fl.Offset = 0
			return f.scratchAddr(p, storeSize(fl.Type)+fl.BitOff/8), fl
		}
		if !x.Arrow {
			base, bf := f.memAddr(x.X)
			fl := f.fieldOf(x, bf.Type)
			if fl.Offset != 0 {
				f.emit(asm.Add.Imm(base, int32(fl.Offset)))
			}
			fl.Offset = 0
			return base, fl
		}
	case *syntax.IndexExpr:
		if v := f.g.info.VarOf(x.X); v != nil && (v.Kind == VarAssoc || v.Kind == VarTAssoc) && byRef(v.Type) {
			// An element holding a struct or array is created (zeroed)
			// by the first store into it.
			key := f.assocKeyBuf(x, v)
			return f.createZeroed(abi.MapAssoc, key, f.g.assocValue, "assocok"), program.Field{Type: v.Type}
		}
		if bt := f.typeOf(x.X); bt.Kind == program.TPointer {
			t := f.typeOf(x)
			return f.storeAddr(f.addrOf(x), t), program.Field{Type: t}
		}
		if v := f.g.info.VarOf(x.X); v == nil || (v.Kind != VarAssoc && v.Kind != VarTAssoc) {
			base, bf := f.memAddr(x.X)
			if bf.Type.Kind == program.TArray {
				i := f.expr(x.Index[0])
				ok, bad := f.label("idx"), f.label("badidx")
				f.emit(asm.JGE.Imm(i, int32(bf.Type.Len), bad), asm.Ja.Label(ok))
				f.mark(bad)
				f.fault(abi.FltBadIndex, i, true)
				f.mark(ok)
				f.emit(asm.Mul.Imm(i, int32(bf.Type.Elem.Size)), asm.Add.Reg(base, i))
				f.free(i)
				return base, program.Field{Type: bf.Type.Elem}
			}
			f.free(base)
		}
	}
	f.fail(e, "invalid assignment target")
	return 0, program.Field{}
}

// storeSize is the number of bytes a store of type t writes.
func storeSize(t *program.Type) uint32 {
	if t.Kind == program.TPointer || t.Size == 0 {
		return 8
	}
	return t.Size
}

// scratchAddr turns an address (in a register, consumed) into a pointer
// the verifier accepts for a store of size bytes. DTrace lets a program
// store through pointers only into memory it owns: the address must lie
// within the alloca() memory this clause has taken (allocaCheck), the
// clause-local variables, or the storage of the global variables
// (dt_gvars, which &a[i] and &g.m of globals point into); anything else
// faults with "invalid address".
func (f *fn) scratchAddr(a asm.Register, size uint32) asm.Register {
	ms := int16(f.g.layout.MState)
	// Through memory the value becomes a plain number even when a is a
	// pointer the verifier tracks.
	f.launder(a)
	p := f.alloc()
	// Set before gvars() spills it around its helper call.
	f.emit(asm.Mov.Imm(p, 0))
	bad, ok := f.label("badst"), f.label("stok")
	lo, arena, end := f.g.allocaStart(), f.g.layout.Alloca, f.g.gvarEnd
	// Clause-local structs and arrays (&this->s.m) are scratch too.
	tlo, thi := f.g.layout.Temps, f.g.layout.Temps+f.g.thisEnd
	if arena < size && end < size && thi < tlo+size {
		// Nowhere to store: the store always faults, but the code after
		// the fault path must stay reachable (the kernel refuses
		// unreachable instructions); a never-taken jump keeps it so.
		f.emit(asm.Mov.Reg(p, regScratch), asm.JNE.Reg(a, a, ok))
	}
	if arena >= size || thi >= tlo+size {
		off := f.alloc()
		f.emit(asm.LoadMem(off, regScratch, ms+msBase, asm.DWord), asm.Neg.Imm(off, 0), asm.Add.Reg(off, a))
		if arena >= size {
			// In the arena: within the clause's alloca() memory or a
			// fault; the constant bound is for the verifier.
			next := f.label("stnx")
			f.emit(asm.JSLT.Imm(off, int32(lo), next), asm.JSGE.Imm(off, int32(lo+arena), next))
			f.allocaCheck(off, a, size, false)
			f.emit(asm.JSGT.Imm(off, int32(lo+arena-size), bad),
				asm.Mov.Reg(p, regScratch), asm.Add.Reg(p, off), asm.Ja.Label(ok))
			f.mark(next)
		}
		if thi >= tlo+size {
			next := f.label("stnx")
			f.emit(asm.JSLT.Imm(off, int32(tlo), next), asm.JSGT.Imm(off, int32(thi-size), next),
				asm.Mov.Reg(p, regScratch), asm.Add.Reg(p, off), asm.Ja.Label(ok))
			f.mark(next)
		}
		f.free(off)
	}
	if end >= size {
		gv := f.gvars()
		off := f.alloc()
		f.emit(asm.Mov.Reg(off, gv))
		f.launder(off)
		f.emit(asm.Neg.Imm(off, 0), asm.Add.Reg(off, a),
			asm.JSLT.Imm(off, 0, bad), asm.JSGT.Imm(off, int32(end-size), bad),
			asm.Mov.Reg(p, gv), asm.Add.Reg(p, off), asm.Ja.Label(ok))
		f.free(off, gv)
	}
	f.mark(bad)
	f.fault(abi.FltBadAddr, a, true)
	f.mark(ok)
	f.free(a)
	return p
}

// storeAddr is scratchAddr for a store of a value of type t through a
// pointer (*p = v, p[i] = v): as in DTrace, a valid address that is
// not aligned to a scalar's size then faults with "invalid alignment".
func (f *fn) storeAddr(a asm.Register, t *program.Type) asm.Register {
	c := f.alloc()
	f.emit(asm.Mov.Reg(c, a))
	p := f.scratchAddr(a, storeSize(t))
	f.checkAlign(c, t)
	f.free(c)
	return p
}

// launder turns the value of r into a plain number for the verifier (a
// pointer it tracks becomes a scalar when it goes through memory).
func (f *fn) launder(r asm.Register) {
	ms := int16(f.g.layout.MState)
	f.emit(asm.StoreMem(regScratch, ms+msLaunder, r, asm.DWord), asm.LoadMem(r, regScratch, ms+msLaunder, asm.DWord))
}

// loadMem reads the member lv designates.
func (f *fn) loadMem(lv lvalue) asm.Register {
	p := f.alloc()
	f.emit(asm.Mov.Reg(p, lv.addr))
	if lv.field.BitSize != 0 {
		return f.bitfield(p, lv.field, true, false)
	}
	if byRef(lv.v.Type) {
		return p
	}
	v := f.alloc()
	f.loadField(v, p, 0, lv.v.Type)
	f.free(p)
	return v
}

// storeMem writes r (consumed) into the member lv designates and frees
// the address.
func (f *fn) storeMem(lv lvalue, r asm.Register, vt *program.Type) {
	t := lv.v.Type
	defer f.free(lv.addr)
	if t.IsString() {
		// A string member has exactly its type's size, NUL included.
		f.call(asm.FnProbeReadKernelStr, reg(lv.addr), imm(int64(t.Size)), reg(r))
		f.used[lv.addr] = true
		return
	}
	if byRef(t) {
		f.copyInto(lv.addr, r, t)
		f.used[lv.addr] = true
		return
	}
	fl := lv.field
	if fl.BitSize != 0 {
		unit := bitUnit(fl)
		old := f.alloc()
		f.loadField(old, lv.addr, 0, unit)
		mask := (uint64(1)<<fl.BitSize - 1) << fl.BitOff
		m := f.alloc()
		f.movImm(m, int64(^mask))
		f.emit(asm.And.Reg(old, m))
		f.movImm(m, int64(uint64(1)<<fl.BitSize-1))
		f.emit(asm.And.Reg(r, m), asm.LSh.Imm(r, int32(fl.BitOff)), asm.Or.Reg(old, r))
		f.emit(asm.StoreMem(lv.addr, 0, old, sizeOf(unit.Size)))
		f.free(old, m, r)
		return
	}
	f.convert(r, vt, t)
	size := t.Size
	if t.Kind == program.TPointer {
		size = 8
	}
	f.emit(asm.StoreMem(lv.addr, 0, r, sizeOf(size)))
	f.free(r)
}

// sizeOf maps a byte count to a load/store size.
func sizeOf(n uint32) asm.Size {
	switch n {
	case 1:
		return asm.Byte
	case 2:
		return asm.Half
	case 4:
		return asm.Word
	}
	return asm.DWord
}

func (f *fn) loadL(e syntax.Expr, lv lvalue) asm.Register {
	if lv.mem {
		return f.loadMem(lv)
	}
	if lv.idx != nil {
		f.call(asm.FnMapLookupElem, mapOp(abi.MapAssoc), scr(lv.key))
		return f.dynResult(lv.v.Type)
	}
	return f.loadVar(e, lv.v)
}

func (f *fn) storeL(n syntax.Node, lv lvalue, r asm.Register, vt *program.Type) {
	if lv.mem {
		f.storeMem(lv, r, vt)
		return
	}
	if lv.idx != nil {
		t := lv.v.Type
		if !byRef(t) {
			f.convert(r, vt, t)
		}
		f.dynStore(abi.MapAssoc, lv.key, f.g.assocValue, r, t)
		return
	}
	f.storeVar(n, lv.v, r, vt)
}

// assign compiles = and the compound assignments; the value of the
// expression is the stored value.
func (f *fn) assign(e *syntax.AssignExpr) asm.Register {
	var lv lvalue
	var r asm.Register
	vt := f.typeOf(e.Y)
	if e.Op == syntax.ASSIGN && f.isMemLvalue(e.X) {
		// As dtrace does, the value first and then the address: a chain
		// p[0] = p[1] = ... = v then holds one address at a time.
		h := f.hold(f.expr(e.Y), e.X)
		lv = f.lvalueOf(e.X)
		r = f.release(h)
	} else {
		lv = f.lvalueOf(e.X)
	}
	t := lv.v.Type
	if t == nil {
		t = program.TypeLong
	}
	if e.Op == syntax.ASSIGN {
		if !lv.mem {
			r = f.expr(e.Y)
		}
	} else {
		hx := f.hold(f.loadL(e.X, lv), e.Y)
		y := f.expr(e.Y)
		x := f.release(hx)
		f.arithOp(e, compoundOp(e.Op), x, y, t, vt, t)
		f.free(y)
		r, vt = x, t
	}
	if byRef(t) {
		// The value of a string assignment is the source.
		keepR := f.alloc()
		f.emit(asm.Mov.Reg(keepR, r))
		f.storeL(e, lv, r, vt)
		return keepR
	}
	f.convert(r, vt, t)
	out := f.alloc()
	f.emit(asm.Mov.Reg(out, r))
	f.storeL(e, lv, r, t)
	return out
}

// compoundBase maps a compound assignment operator to its binary one.
var compoundBase = map[syntax.Token]syntax.Token{
	syntax.ADDASS: syntax.ADD, syntax.SUBASS: syntax.SUB, syntax.MULASS: syntax.MUL,
	syntax.QUOASS: syntax.QUO, syntax.REMASS: syntax.REM, syntax.ANDASS: syntax.AND,
	syntax.ORASS: syntax.OR, syntax.XORASS: syntax.XOR, syntax.SHLASS: syntax.SHL,
	syntax.SHRASS: syntax.SHR,
}

// compoundOp returns the binary operator of a compound assignment (ADD
// for ADDASS), or op itself.
func compoundOp(op syntax.Token) syntax.Token {
	if b, ok := compoundBase[op]; ok {
		return b
	}
	return op
}

// incdec compiles ++x, --x, x++ and x--.
func (f *fn) incdec(e syntax.Expr, op syntax.Token, post bool) asm.Register {
	lv := f.lvalueOf(e)
	t := lv.v.Type
	if t == nil {
		t = program.TypeLong
	}
	x := f.loadL(e, lv)
	old := f.alloc()
	f.emit(asm.Mov.Reg(old, x))
	step := int32(1)
	if t.Kind == program.TPointer && t.Elem != nil && t.Elem.Size > 0 {
		step = int32(t.Elem.Size)
	}
	if op == syntax.DEC {
		step = -step
	}
	f.emit(asm.Add.Imm(x, step))
	f.normalize(x, t)
	nw := f.alloc()
	f.emit(asm.Mov.Reg(nw, x))
	f.storeL(e, lv, x, t)
	if post {
		f.free(nw)
		return old
	}
	f.free(old)
	return nw
}
