package codegen

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// This file compiles variable loads and stores: globals in dt_gvars,
// thread-locals in dt_tvars, clause-locals in scratch, associative arrays
// in dt_assoc, and the builtin variables.

// gvars returns a pointer to the dt_gvars value, by direct value access
// (an array of one needs no lookup).
func (f *fn) gvars() asm.Register {
	r := f.alloc()
	f.emit(asm.LoadMapValue(r, 0, 0).WithReference(abi.MapGVars))
	return r
}

// loadVar loads a variable's value (strings and structs by reference).
func (f *fn) loadVar(e syntax.Expr, v *Var) asm.Register {
	t := v.Type
	if t == nil {
		t = program.TypeLong
	}
	switch v.Kind {
	case VarConst:
		r := f.alloc()
		f.movImm(r, v.Value)
		return r
	case VarGlobal:
		return f.loadAt(f.gvars(), f.g.gvars[v.ID], t)
	case VarFlow:
		return f.loadFlowVar(v, t)
	case VarClause:
		off := f.g.thisVars[v.ID]
		r := f.alloc()
		if byRef(t) {
			f.scratchPtr(r, off)
			if t.IsString() {
				f.nullStr(r)
			}
		} else {
			f.loadField(r, regScratch, int16(off), t)
		}
		return r
	case VarThread:
		key := f.tvarKey(v.ID)
		f.call(asm.FnMapLookupElem, mapOp(abi.MapTVars), scr(key))
		return f.dynResult(t)
	case VarBuiltin:
		return f.builtin(e, v)
	case VarParam:
		return f.loadParam(e, v)
	case VarSymbol:
		r := f.symbolAddr(e, v)
		if t.Kind == program.TArray && t.Size == 0 {
			// An array of unknown length (extern char linux_banner[])
			// cannot be copied: it stands for its address, from which
			// stringof() and string arguments read up to strsize bytes.
			return r
		}
		return f.loadScalar(r, t, false)
	case VarAssoc, VarTAssoc:
		f.fail(e, "associative array %s used without a key", v.Name)
	}
	f.fail(e, "unsupported variable %s", v.Name)
	return 0
}

// loadAt loads a variable of type t stored at offset off of the map
// value p (consumed): globals, flow variables.
func (f *fn) loadAt(p asm.Register, off uint32, t *program.Type) asm.Register {
	if byRef(t) {
		f.emit(asm.Add.Imm(p, int32(off)))
		if t.IsString() {
			f.nullStr(p)
		}
		return p
	}
	// By the type's size: the slot holds that many bytes (slot).
	r := f.alloc()
	f.loadField(r, p, int16(off), t)
	f.free(p)
	return r
}

// storeAt stores r (consumed) into a variable of type t at offset off of
// the map value p (consumed).
func (f *fn) storeAt(p asm.Register, off uint32, r asm.Register, t *program.Type) {
	if byRef(t) {
		f.emit(asm.Add.Imm(p, int32(off)))
		f.copyStrVar(p, r, t)
		return
	}
	f.emit(asm.StoreMem(p, int16(off), r, sizeOf(scalarSize(t))))
	f.free(p, r)
}

// dynResult turns the result of a dynamic-variable lookup (R0, possibly
// NULL) into a value: 0 or "" when absent.
func (f *fn) dynResult(t *program.Type) asm.Register {
	r := f.alloc()
	found, done := f.label("dyn"), f.label("dynend")
	f.emit(asm.JNE.Imm(asm.R0, 0, found))
	if t.IsString() {
		// An unset string is NULL.
		f.emit(asm.Mov.Imm(r, 0))
	} else if byRef(t) {
		off := f.tmp(max(8, t.Size))
		for i := uint32(0); i < max(8, t.Size); i += 8 {
			f.emit(storeImm(regScratch, int16(off+i), 0, asm.DWord))
		}
		f.scratchPtr(r, off)
	} else {
		f.emit(asm.Mov.Imm(r, 0))
	}
	f.emit(asm.Ja.Label(done))
	f.mark(found)
	if byRef(t) {
		f.emit(asm.Mov.Reg(r, asm.R0))
		if t.IsString() {
			f.nullStr(r)
		}
	} else {
		f.emit(asm.LoadMem(r, asm.R0, 0, asm.DWord))
	}
	f.mark(done)
	return r
}

// tvarKey builds the (tid, id) key of a thread-local in scratch.
func (f *fn) tvarKey(id int) uint32 {
	key := f.tmp(abi.TVarKeySize)
	f.call(asm.FnGetCurrentPidTgid)
	f.emit(asm.Mov.Reg32(asm.R0, asm.R0),
		asm.StoreMem(regScratch, int16(key), asm.R0, asm.DWord),
		storeImm(regScratch, int16(key+8), int64(id), asm.DWord))
	return key
}

// storeVar stores the value in r (consumed) into variable v, whose
// value has type vt. Storing 0 into a dynamic variable deletes it.
func (f *fn) storeVar(n syntax.Node, v *Var, r asm.Register, vt *program.Type) {
	t := v.Type
	if t == nil {
		t = program.TypeLong
	}
	if !byRef(t) {
		f.convert(r, vt, t)
	}
	switch v.Kind {
	case VarGlobal:
		f.storeAt(f.gvars(), f.g.gvars[v.ID], r, t)
	case VarFlow:
		f.storeFlowVar(v, r, t)
	case VarClause:
		off := f.g.thisVars[v.ID]
		if byRef(t) {
			p := f.alloc()
			f.scratchPtr(p, off)
			f.copyStrVar(p, r, t)
			return
		}
		f.emit(asm.StoreMem(regScratch, int16(off), r, sizeOf(scalarSize(t))))
		f.free(r)
	case VarThread:
		key := f.tvarKey(v.ID)
		f.dynStore(abi.MapTVars, key, f.g.tvarSize, r, t)
	default:
		f.fail(n, "cannot assign to %s", v.Name)
	}
}

// copyStrVar copies a value into a variable's storage (both consumed);
// for strings it also records whether src is NULL in the nullFlag byte.
func (f *fn) copyStrVar(dst, src asm.Register, t *program.Type) {
	if !t.IsString() {
		f.copyInto(dst, src, t)
		return
	}
	fl, d := f.alloc(), f.alloc()
	l := f.label("nn")
	f.emit(asm.Mov.Reg(d, dst), asm.Mov.Imm(fl, 0), asm.JNE.Imm(src, 0, l), asm.Mov.Imm(fl, 1))
	f.mark(l)
	f.copyInto(dst, src, t)
	f.emit(asm.StoreMem(d, f.g.nullFlag(), fl, asm.Byte))
	f.free(fl, d)
}

// nullStr turns a pointer to a string variable's storage into 0 when the
// variable holds NULL.
func (f *fn) nullStr(p asm.Register) {
	l := f.label("notnull")
	f.emit(asm.LoadMem(asm.R0, p, f.g.nullFlag(), asm.Byte), asm.JEq.Imm(asm.R0, 0, l), asm.Mov.Imm(p, 0))
	f.mark(l)
}

// copyInto copies a by-reference value src to dst (both consumed).
func (f *fn) copyInto(dst, src asm.Register, t *program.Type) {
	if t.Kind == program.TString {
		f.call(asm.FnProbeReadKernelStr, reg(dst), imm(int64(f.g.opts.StrSize+1)), reg(src))
		return
	}
	f.call(asm.FnProbeReadKernel, reg(dst), imm(int64(t.Size)), reg(src))
}

// createZeroed returns a pointer to the value of dynamic map m at the
// key staged at scratch offset key, inserting a zeroed value of size
// bytes first if there is none; when the map is full the drop is
// counted and the clause ends. hint names the label.
func (f *fn) createZeroed(m string, key, size uint32, hint string) asm.Register {
	f.g.zeroSize = max(f.g.zeroSize, size)
	p := f.lookupOrInsert(m, key, abi.CPUDynVarDrops)
	ok := f.label(hint)
	f.emit(asm.JNE.Imm(p, 0, ok), asm.Ja.Label(f.ret))
	f.mark(ok)
	return p
}

// dynStore writes a dynamic variable: delete on zero, else update with
// the value staged in scratch; a failed update counts a drop.
func (f *fn) dynStore(m string, key, valSize uint32, r asm.Register, t *program.Type) {
	val := f.tmp(valSize)
	done := f.label("dsdone")
	str, byRef := t.IsString(), !t.IsString() && byRef(t)
	if !byRef {
		// Storing 0 deletes, and for a string storing NULL.
		upd := f.label("dsupd")
		f.emit(asm.JNE.Imm(r, 0, upd))
		f.free(r)
		f.call(asm.FnMapDeleteElem, mapOp(m), scr(key))
		f.emit(asm.Ja.Label(done))
		f.mark(upd)
		f.used[r] = true
	}
	switch {
	case str || byRef:
		p := f.alloc()
		f.scratchPtr(p, val)
		if str {
			f.copyStrVar(p, r, t)
		} else {
			f.copyInto(p, r, t)
		}
	default:
		f.emit(asm.StoreMem(regScratch, int16(val), r, asm.DWord))
		f.free(r)
	}
	f.call(asm.FnMapUpdateElem, mapOp(m), scr(key), scr(val), imm(0))
	f.emit(asm.JEq.Imm(asm.R0, 0, done))
	f.bumpCounter(abi.CPUDynVarDrops)
	f.mark(done)
}

// assocKeyBuf builds the key of an associative array element in scratch.
func (f *fn) assocKeyBuf(e *syntax.IndexExpr, v *Var) uint32 {
	size := f.g.assocKey
	key := f.tmp(size)
	for i := uint32(0); i < size; i += 8 {
		f.emit(storeImm(regScratch, int16(key+i), 0, asm.DWord))
	}
	f.emit(storeImm(regScratch, int16(key), int64(v.ID), asm.DWord))
	if v.Kind == VarTAssoc {
		f.call(asm.FnGetCurrentPidTgid)
		f.emit(asm.Mov.Reg32(asm.R0, asm.R0), asm.StoreMem(regScratch, int16(key+8), asm.R0, asm.DWord))
	}
	f.tuple(e.Index, v.Keys, key+abi.AssocKeyTuple)
	return key
}

// tuple stores the values of keys at scratch offset off, each item
// keySize bytes (integers widened to 8 bytes, strings by value). The
// area must already be zeroed so that keys compare equal bytewise.
func (f *fn) tuple(keys []syntax.Expr, types []*program.Type, off uint32) uint32 {
	for i, k := range keys {
		kt := f.typeOf(k)
		if i < len(types) && types[i] != nil {
			kt = types[i]
		}
		if kt.Stack != 0 {
			f.stackInto(off, kt)
			off += f.g.keySize(kt)
			continue
		}
		if kt.KeyWidth != 0 {
			f.narrowString(k, kt, off)
			off += f.g.keySize(kt)
			continue
		}
		if kt.Sym != program.KindNone {
			f.symInto(k, kt.Sym, regScratch, int16(off))
			off += f.g.keySize(kt)
			continue
		}
		r := f.expr(k)
		if byRef(kt) {
			p := f.alloc()
			f.scratchPtr(p, off)
			f.copyInto(p, r, kt)
		} else {
			f.convert(r, f.typeOf(k), kt)
			f.emit(asm.StoreMem(regScratch, int16(off), r, asm.DWord))
			f.free(r)
		}
		off += f.g.keySize(kt)
	}
	return off
}

func (f *fn) assocLoad(e *syntax.IndexExpr, v *Var) asm.Register {
	key := f.assocKeyBuf(e, v)
	f.call(asm.FnMapLookupElem, mapOp(abi.MapAssoc), scr(key))
	return f.dynResult(v.Type)
}

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

// builtin loads a builtin variable.
func (f *fn) builtin(e syntax.Expr, v *Var) asm.Register {
	g := varGenOf(v.Name)
	if g == nil || g.load == nil {
		f.fail(e, "builtin variable %s is not supported yet", v.Name)
	}
	r := g.load(f, e, v.Name)
	f.normalize(r, v.Type)
	return r
}

// varArg loads arg0 to arg9.
func (f *fn) varArg(_ syntax.Expr, name string) asm.Register {
	ms := int16(f.g.layout.MState)
	r := f.alloc()
	f.emit(asm.LoadMem(r, regScratch, ms+abi.MStateArgs+8*int16(name[3]-'0'), asm.DWord))
	return r
}

// varID loads id.
func (f *fn) varID(_ syntax.Expr, _ string) asm.Register {
	ms := int16(f.g.layout.MState)
	r := f.alloc()
	f.emit(asm.LoadMem(r, regScratch, ms+abi.MStatePrid, asm.Word))
	return r
}

// varEpid loads epid.
func (f *fn) varEpid(_ syntax.Expr, _ string) asm.Register {
	ms := int16(f.g.layout.MState)
	r := f.alloc()
	f.emit(asm.LoadMem(r, regScratch, ms+abi.MStateEPID, asm.Word))
	return r
}

// varTimestamp loads timestamp, vtimestamp.
func (f *fn) varTimestamp(_ syntax.Expr, _ string) asm.Register {
	ms := int16(f.g.layout.MState)
	r := f.alloc()
	l := f.label("ts")
	f.emit(asm.LoadMem(r, regScratch, ms+abi.MStateTimestamp, asm.DWord), asm.JNE.Imm(r, 0, l))
	f.free(r)
	f.call(asm.FnKtimeGetNs)
	f.emit(asm.StoreMem(regScratch, ms+abi.MStateTimestamp, asm.R0, asm.DWord))
	f.used[r] = true
	f.emit(asm.Mov.Reg(r, asm.R0))
	f.mark(l)
	return r
}

// varWalltimestamp loads walltimestamp: CLOCK_TAI less the kernel's TAI
// offset, read when the program is compiled.
func (f *fn) varWalltimestamp(_ syntax.Expr, _ string) asm.Register {
	f.call(asm.FnKtimeGetTaiNs)
	r := f.result()
	if off := taiOffset(); off != 0 {
		f.emit(asm.LoadImm(asm.R0, off, asm.DWord), asm.Sub.Reg(r, asm.R0))
	}
	return r
}

// varPpid loads ppid.
func (f *fn) varPpid(e syntax.Expr, _ string) asm.Register {
	r, ok := f.taskMember("psinfo_t", "pr_ppid")
	if !ok {
		f.fail(e, "builtin variable ppid needs the D library's psinfo_t translator")
	}
	return r
}

// cgroupMember loads a builtin that the D library's cgroupinfo_t
// translator (container.d) gives of curthread: zonename, cgroupid.
func cgroupMember(member, name string) func(*fn, syntax.Expr, string) asm.Register {
	return func(f *fn, e syntax.Expr, _ string) asm.Register {
		r, ok := f.taskMember("cgroupinfo_t", member)
		if !ok {
			f.fail(e, "builtin variable %s needs the D library's cgroupinfo_t translator", name)
		}
		return r
	}
}

// subrCgrouppath compiles cgrouppath(): the path of zonename's cgroup.
func (f *fn) subrCgrouppath(c *syntax.CallExpr, _ string) asm.Register {
	r, ok := f.taskMember("cgroupinfo_t", "cg_path")
	if !ok {
		f.fail(c, "cgrouppath() needs the D library's cgroupinfo_t translator")
	}
	return r
}

// halfOf loads one half of what helper returns: the low 32 bits if low
// (tid of bpf_get_current_pid_tgid, uid of bpf_get_current_uid_gid), else
// the high ones (pid, gid).
func halfOf(helper asm.BuiltinFunc, low bool) func(*fn, syntax.Expr, string) asm.Register {
	return func(f *fn, _ syntax.Expr, _ string) asm.Register {
		f.call(helper)
		r := f.result()
		if low {
			f.emit(asm.Mov.Reg32(r, r))
		} else {
			f.emit(asm.RSh.Imm(r, 32))
		}
		return r
	}
}

// varCurthread loads curthread.
func (f *fn) varCurthread(_ syntax.Expr, _ string) asm.Register {
	f.call(asm.FnGetCurrentTask)
	return f.result()
}

// varExecname loads execname.
func (f *fn) varExecname(_ syntax.Expr, _ string) asm.Register {
	off := f.tmp(f.g.strBuf())
	f.call(asm.FnGetCurrentComm, scr(off), imm(16))
	r := f.alloc()
	f.scratchPtr(r, off)
	return r
}

// varErrno loads errno.
func (f *fn) varErrno(_ syntax.Expr, _ string) asm.Register {
	r := f.alloc()
	// The provider's prologue leaves errno in mstate (0 where the
	// probe has none).
	f.emit(asm.LoadMem(r, regScratch, int16(f.g.layout.MState)+abi.MStateErrno, asm.DWord))
	return r
}

// varIpl loads ipl.
func (f *fn) varIpl(_ syntax.Expr, _ string) asm.Register {
	return f.zero()
}

// varUregs fails: uregs[] is only indexed (uregs).
func (f *fn) varUregs(e syntax.Expr, _ string) asm.Register {
	f.fail(e, "uregs[] must be indexed")
	return 0
}

// varCaller loads caller, ucaller.
func (f *fn) varCaller(_ syntax.Expr, name string) asm.Register {
	// The second frame of the kernel or user stack (the first is
	// the probed location itself), 0 when there is none.
	off := f.tmp(16)
	f.emit(storeImm(regScratch, int16(off), 0, asm.DWord), storeImm(regScratch, int16(off+8), 0, asm.DWord))
	if name == "ucaller" {
		f.free(f.ustackPCs(off, 16))
	} else {
		f.call(asm.FnGetStack, ctxOp(), scr(off), imm(16), imm(0))
	}
	r := f.alloc()
	f.emit(asm.LoadMem(r, regScratch, int16(off+8), asm.DWord))
	return r
}

// varStackdepth loads stackdepth, ustackdepth.
func (f *fn) varStackdepth(_ syntax.Expr, name string) asm.Register {
	ms := int16(f.g.layout.MState)
	// The number of frames bpf_get_stack finds (0 on failure).
	depth := f.g.maxFrames(stackMaxDepth)
	off := f.tmp(uint32(depth * 8))
	var r asm.Register
	if name == "ustackdepth" {
		r = f.ustackPCs(off, depth*8)
	} else {
		f.call(asm.FnGetStack, ctxOp(), scr(off), imm(depth*8), imm(0))
		r = f.result()
	}
	l, zero := f.label("sd"), f.label("sdz")
	f.emit(asm.JSLT.Imm(r, 0, zero), asm.RSh.Imm(r, 3))
	if name == "stackdepth" {
		// BEGIN and END fire in the consumer: no kernel stack.
		p := f.alloc()
		f.emit(asm.LoadMem(p, regScratch, ms+abi.MStatePrid, asm.Word), asm.JLE.Imm(p, abi.ProbeEnd, zero))
		f.free(p)
	}
	f.emit(asm.Ja.Label(l))
	f.mark(zero)
	f.emit(asm.Mov.Imm(r, 0))
	f.mark(l)
	return r
}

// varCurcpu loads curcpu.
func (f *fn) varCurcpu(_ syntax.Expr, _ string) asm.Register {
	ms := int16(f.g.layout.MState)
	// A cpuinfo_t built in this CPU's mstate (doc.go).
	f.call(asm.FnGetSmpProcessorId)
	f.emit(asm.StoreMem(regScratch, ms+msCPUInfo, asm.R0, asm.Word),
		storeImm(regScratch, ms+msCPUInfo+4, 0, asm.Word))
	f.call(asm.FnGetNumaNodeId)
	f.emit(asm.StoreMem(regScratch, ms+msCPUInfo+8, asm.R0, asm.Word),
		asm.StoreMem(regScratch, ms+msCPUInfo+12, asm.R0, asm.Word))
	r := f.alloc()
	f.scratchPtr(r, uint32(ms+msCPUInfo))
	return r
}

// varProbeName loads probeprov, probemod, probefunc, probename.
func (f *fn) varProbeName(_ syntax.Expr, name string) asm.Register {
	return f.probeName(name)
}

// argsIndex compiles args[i]: the translation of the probe's argument i
// when its provider translates them, else mstate arg i.
func (f *fn) argsIndex(e *syntax.IndexExpr) asm.Register {
	if r, ok := f.xlateWhole(e, f.typeOf(e)); ok {
		return r
	}
	return f.argLoad(e, f.typeOf(e))
}

// argLoad loads args[i] (untranslated) as a value of type t.
func (f *fn) argLoad(e *syntax.IndexExpr, t *program.Type) asm.Register {
	i, ok := f.constant(e.Index[0])
	if !ok || i < 0 || i > 9 {
		f.fail(e, "args[] index must be a constant from 0 to 9")
	}
	r := f.alloc()
	f.emit(asm.LoadMem(r, regScratch, int16(f.g.layout.MState)+abi.MStateArgs+8*int16(i), asm.DWord))
	f.normalize(r, t)
	return r
}

// probeName returns the probe's provider/module/function/name string,
// which the loader stores per probe id in dt_probes.
func (f *fn) probeName(name string) asm.Register {
	ms := int16(f.g.layout.MState)
	key := f.tmp(8)
	f.emit(asm.LoadMem(asm.R0, regScratch, ms+abi.MStatePrid, asm.Word), asm.StoreMem(regScratch, int16(key), asm.R0, asm.Word))
	f.call(asm.FnMapLookupElem, mapOp(abi.MapProbes), scr(key))
	r := f.alloc()
	found, done := f.label("pn"), f.label("pnend")
	f.emit(asm.JNE.Imm(asm.R0, 0, found))
	f.emptyStr(r)
	f.emit(asm.Ja.Label(done))
	f.mark(found)
	f.emit(asm.Mov.Reg(r, asm.R0), asm.Add.Imm(r, int32(probeNameOffset(name))))
	f.mark(done)
	return r
}

// probeNameOffset is the offset of a probe name builtin's string in a
// dt_probes value.
func probeNameOffset(name string) int16 {
	switch name {
	case "probemod":
		return abi.ProbeNameSize
	case "probefunc":
		return 2 * abi.ProbeNameSize
	case "probename":
		return 3 * abi.ProbeNameSize
	}
	return 0
}

// maxFrames returns depth reduced to the maxframes option.
func (g *gen) maxFrames(depth int64) int64 {
	if m := g.opts.MaxFrames; m > 0 && depth > m {
		return m
	}
	return depth
}

// stackMaxDepth is the deepest stack stackdepth counts (the kernel's
// default perf_event_max_stack).
const stackMaxDepth = 127

// ptRegsWords is the number of u64 words of x86-64's struct pt_regs,
// whose order uregs[] indexes (regs-amd64.d's R_* constants).
const ptRegsWords = 21

// uregs compiles uregs[i]: word i of the current task's user registers
// (bpf_task_pt_regs); indexes past pt_regs (the segment registers kept
// in the task's thread) read 0; beyond R_TRAPNO the index faults.
func (f *fn) uregs(e *syntax.IndexExpr) asm.Register {
	i := f.expr(e.Index[0])
	ok, bad, zero, done := f.label("ur"), f.label("urbad"), f.label("urz"), f.label("urend")
	f.emit(asm.JGT.Imm(i, 25, bad), asm.JGE.Imm(i, ptRegsWords, zero), asm.Ja.Label(ok))
	f.mark(bad)
	f.fault(abi.FltBadIndex, i, true)
	f.mark(ok)
	hi := f.hold(i, nil)
	f.call(asm.FnGetCurrentTaskBtf)
	t := f.result()
	f.call(asm.FnTaskPtRegs, reg(t))
	p := f.result()
	f.launder(p)
	i = f.release(hi)
	f.emit(asm.LSh.Imm(i, 3), asm.Add.Reg(p, i))
	f.free(i)
	v := f.loadScalar(p, program.TypeULong, false)
	f.emit(asm.Ja.Label(done))
	f.mark(zero)
	f.emit(asm.Mov.Imm(v, 0))
	f.mark(done)
	return v
}

// symbolAddr sets a register to the address of kernel symbol v. A
// symbol the link policy leaves unresolved is refused as dtrace refuses
// a relocation that remains (D_ASRELO), naming the byte offset of the
// instruction that would carry it.
func (f *fn) symbolAddr(n syntax.Node, v *Var) asm.Register {
	link := f.g.opts.Link
	if link == LinkDynamic || link == LinkPrimary && v.Module != "vmlinux" {
		mod := v.Module
		if mod == "" {
			mod = "vmlinux"
		}
		off := uint64(0)
		for _, ins := range f.insns {
			off += ins.Size()
		}
		f.bail(&Error{Pos: n.Pos(), Tag: "D_ASRELO",
			Err: fmt.Errorf("relocation remains against kernel symbol %s`%s (offset 0x%x)", mod, v.Name, off)})
	}
	r := f.alloc()
	f.movImm(r, v.Value)
	return r
}
