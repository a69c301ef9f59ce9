package codegen

import (
	"github.com/cilium/ebpf/asm"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/program"
)

// This file compiles translations. A member of a translated value
// (xlate<T>(x).m, xlate<T *>(p)->m, curpsinfo->pr_pid, args[i]->m of a
// translated probe argument) compiles to the translator's expression for
// that member, with the translator's parameter bound to the input
// expression: each reference to the parameter evaluates the input again,
// in the bindings of the place the translation was written. A
// translation used as a whole (stored, traced, dereferenced) is
// materialized member by member in a zeroed scratch temporary, and its
// value is a pointer to that copy.

// binding is what a translator parameter stands for.
type binding struct {
	expr syntax.Expr
	env  map[*Var]binding
	// raw marks a translated probe argument: the parameter is the
	// argument's native value.
	raw bool
	// cur binds the parameter to curthread (expr is nil).
	cur bool
}

// withBind compiles body with parameter p bound to in.
func (f *fn) withBind(p *Var, in syntax.Expr, body func()) {
	old := f.binds
	nb := make(map[*Var]binding, len(old)+1)
	for k, v := range old {
		nb[k] = v
	}
	b := binding{expr: in, env: old}
	if xi, ok := f.g.info.(XlateInfo); ok {
		if ix, ok := in.(*syntax.IndexExpr); ok {
			if _, _, _, ok := xi.XlateOf(ix); ok {
				b.raw = true
			}
		}
	}
	nb[p] = b
	f.binds = nb
	defer func() { f.binds = old }()
	body()
}

// loadParam evaluates a bound translator parameter.
func (f *fn) loadParam(e syntax.Expr, v *Var) asm.Register {
	b, ok := f.binds[v]
	if !ok {
		f.fail(e, "translator parameter %s used outside a translation", v.Name)
	}
	saved := f.binds
	f.binds = b.env
	defer func() { f.binds = saved }()
	var r asm.Register
	if b.cur {
		f.call(asm.FnGetCurrentTask)
		return f.result()
	}
	if b.raw {
		r = f.argLoad(b.expr.(*syntax.IndexExpr), v.Type)
	} else {
		r = f.expr(b.expr)
		if v.Type != nil {
			f.convert(r, f.typeOf(b.expr), v.Type)
		}
	}
	return r
}

// xlateMember compiles a member of a translated value; ok is false when
// e is an ordinary member selection.
func (f *fn) xlateMember(e *syntax.MemberExpr) (asm.Register, bool) {
	xi, ok := f.g.info.(XlateInfo)
	if !ok {
		return 0, false
	}
	val, p, in, ok := xi.XlateMember(e)
	if !ok {
		return 0, false
	}
	var r asm.Register
	f.withBind(p, in, func() { r = f.expr(val) })
	f.convert(r, f.typeOf(val), f.typeOf(e))
	return r, true
}

// xlateWhole materializes the translation e stands for (an XlateExpr, a
// translated args[i], or an inline or parenthesized expression standing
// for one) as a struct of type st; ok is false when e is no translation.
func (f *fn) xlateWhole(e syntax.Expr, st *program.Type) (asm.Register, bool) {
	xi, ok := f.g.info.(XlateInfo)
	if !ok || st == nil || st.Kind != program.TStruct {
		return 0, false
	}
	for i := 0; i < 16; i++ {
		if p, ok := e.(*syntax.ParenExpr); ok {
			e = p.X
			continue
		}
		if x := f.g.info.Expand(e); x != nil {
			e = x
			continue
		}
		break
	}
	members, p, in, ok := xi.XlateOf(e)
	if !ok {
		return 0, false
	}
	return f.xlateStruct(st, members, p, in), true
}

// xlateStruct builds a translated struct in a scratch temporary and
// returns a pointer to it.
func (f *fn) xlateStruct(st *program.Type, members map[string]syntax.Expr, p *Var, in syntax.Expr) asm.Register {
	size := align8(max(8, st.Size))
	off := f.tmp(size)
	for i := uint32(0); i < size; i += 8 {
		f.emit(storeImm(regScratch, int16(off+i), 0, asm.DWord))
	}
	mark := f.temp
	for _, fl := range st.Fields {
		val, ok := members[fl.Name]
		if !ok || fl.BitSize != 0 || fl.Type == nil {
			continue
		}
		dst := off + fl.Offset
		f.withBind(p, in, func() {
			r := f.expr(val)
			vt := f.typeOf(val)
			switch {
			case fl.Type.IsScalar():
				f.convert(r, vt, fl.Type)
				f.emit(asm.StoreMem(regScratch, int16(dst), r, sizeOf(storeSize(fl.Type))))
				f.free(r)
			case vt.IsString():
				// The string's bytes up to the member's size (a NULL
				// string leaves the member empty).
				f.call(asm.FnProbeReadKernelStr, scr(dst), imm(int64(fl.Type.Size)), reg(r))
			default:
				n := fl.Type.Size
				if byRef(vt) && vt.Size < n {
					n = vt.Size
				}
				if n == 0 {
					f.free(r)
					return
				}
				f.call(asm.FnProbeReadKernel, scr(dst), imm(int64(n)), reg(r))
			}
		})
		f.temp = max(mark, f.tempBase)
	}
	r := f.alloc()
	f.scratchPtr(r, off)
	return r
}

// taskMember compiles the D library's translation of curthread to type
// out, member m (ppid is psinfo_t's pr_ppid); ok is false when the
// library has no such translator.
func (f *fn) taskMember(out, m string) (asm.Register, bool) {
	xi, ok := f.g.info.(XlateInfo)
	if !ok {
		return 0, false
	}
	val, p, ok := xi.BuiltinXlate(out, m)
	if !ok {
		return 0, false
	}
	old := f.binds
	nb := make(map[*Var]binding, len(old)+1)
	for k, v := range old {
		nb[k] = v
	}
	nb[p] = binding{cur: true}
	f.binds = nb
	defer func() { f.binds = old }()
	return f.expr(val), true
}

// progenyDepth bounds the ancestors progenyof() examines.
const progenyDepth = 32

// progenyof compiles progenyof(pid): 1 when the current process or one
// of its ancestors (real_parent, up to progenyDepth levels) has tgid
// pid. The task_struct layout comes from the D library's psinfo_t
// translator, whose parameter is a struct task_struct *.
func (f *fn) progenyof(c *syntax.CallExpr, pid asm.Register) asm.Register {
	xi, ok := f.g.info.(XlateInfo)
	var tt *program.Type
	if ok {
		if _, p, ok := xi.BuiltinXlate("psinfo_t", "pr_ppid"); ok && p.Type != nil && p.Type.Kind == program.TPointer {
			tt = p.Type.Elem
		}
	}
	var rp, tg program.Field
	ok1, ok2 := false, false
	if tt != nil {
		rp, ok1 = fieldOf(tt, "real_parent")
		tg, ok2 = fieldOf(tt, "tgid")
	}
	if !ok1 || !ok2 {
		f.fail(c, "progenyof( ) needs the kernel's struct task_struct")
	}
	buf := f.tmp(8)
	hp := f.hold(pid, nil)
	f.call(asm.FnGetCurrentTask)
	task := f.result()
	pid = f.release(hp)
	res := f.alloc()
	f.emit(asm.Mov.Imm(res, 0))
	yes, done := f.label("prgy"), f.label("prgend")
	for i := 0; i < progenyDepth; i++ {
		a := f.alloc()
		f.emit(storeImm(regScratch, int16(buf), 0, asm.DWord), asm.Mov.Reg(a, task), asm.Add.Imm(a, int32(tg.Offset)))
		f.call(asm.FnProbeReadKernel, scr(buf), imm(4), reg(a))
		v := f.alloc()
		f.emit(asm.LoadMem(v, regScratch, int16(buf), asm.Word), asm.JEq.Reg(v, pid, yes))
		a = f.alloc()
		f.emit(storeImm(regScratch, int16(buf), 0, asm.DWord), asm.Mov.Reg(a, task), asm.Add.Imm(a, int32(rp.Offset)))
		f.call(asm.FnProbeReadKernel, scr(buf), imm(8), reg(a))
		f.emit(asm.LoadMem(v, regScratch, int16(buf), asm.DWord), asm.JEq.Imm(v, 0, done), asm.JEq.Reg(v, task, done),
			asm.Mov.Reg(task, v))
		f.free(v)
	}
	f.emit(asm.Ja.Label(done))
	f.mark(yes)
	f.emit(asm.Mov.Imm(res, 1))
	f.mark(done)
	f.free(task, pid)
	return res
}
