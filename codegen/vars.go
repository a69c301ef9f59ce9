package codegen

import (
	"github.com/cilium/ebpf/asm"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// This file compiles variable loads and stores: globals in dt_gvars,
// thread-locals in dt_tvars, clause-locals in scratch, associative arrays
// in dt_assoc (builtinvars.go: the builtin variables; lvalue.go:
// assignable places and assignments).

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
	p := f.lookupOrInsert(mapOp(m), key, abi.CPUDynVarDrops)
	ok := f.label(hint)
	f.emit(asm.JNE.Imm(p, 0, ok), asm.Ja.Label(f.ret))
	f.mark(ok)
	return p
}

// dynStore writes a dynamic variable: delete on zero, else update with
// the value staged in scratch; a failed update counts a drop and ends
// the clause, as in dtrace-utils (dt_cg_store_var returns when
// dt_get_dvar finds no room).
func (f *fn) dynStore(m string, key, valSize uint32, r asm.Register, t *program.Type) {
	val := f.tmp(valSize)
	done := f.label("dsdone")
	str, byRef := t.IsString(), !t.IsString() && byRef(t)
	// Storing 0 deletes; for a string storing NULL, and for a struct or
	// union the literal 0 (its value is otherwise an address, never 0),
	// as in dtrace-utils.
	upd := f.label("dsupd")
	f.emit(asm.JNE.Imm(r, 0, upd))
	f.free(r)
	f.call(asm.FnMapDeleteElem, mapOp(m), scr(key))
	f.emit(asm.Ja.Label(done))
	f.mark(upd)
	f.used[r] = true
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
	// End the clause here rather than by a jump to its return, which a
	// clause of many stores puts beyond a jump's 16-bit reach
	// (arithmetic/tst.cast-exp-assoc).
	f.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
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
