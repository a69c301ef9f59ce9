package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/dlang/syntax"
)

// mutexFlags are the low bits of a Linux struct mutex's owner word that
// are flags (waiters, handoff, pickup), not the owning task's address.
const mutexFlags = 0x07

// subrMutex compiles mutex_owned(), mutex_owner(), mutex_type_adaptive()
// and mutex_type_spin() on Linux's struct mutex, as dtrace does there:
// owner holds the owning task with flags in its low bits; a mutex is
// always adaptive (it spins while its owner runs, then sleeps), never a
// spin lock.
func (f *fn) subrMutex(c *syntax.CallExpr, name string) asm.Register {
	f.need(c, 1, 1)
	r := f.expr(c.Args[0])
	switch name {
	case "mutex_type_adaptive":
		f.emit(asm.Mov.Imm(r, 1))
		return r
	case "mutex_type_spin":
		f.emit(asm.Mov.Imm(r, 0))
		return r
	}
	off := uint32(0)
	if mo := f.g.opts.MemberOffset; mo != nil {
		o, err := mo("mutex", "owner")
		if err != nil {
			f.fail(c, "%s( ) needs struct mutex of the kernel: %v", name, err)
			return r
		}
		off = o
	} else {
		f.fail(c, "%s( ) needs the kernel's type information", name)
		return r
	}
	f.emit(asm.Add.Imm(r, int32(off)))
	v := f.loadScalar(r, TypeULong, false)
	f.emit(asm.And.Imm(v, ^int32(mutexFlags)))
	if name == "mutex_owned" {
		// v != 0 as 0 or 1: the sign bit of v | -v.
		t := f.alloc()
		f.emit(asm.Mov.Reg(t, v), asm.Neg.Imm(t, 0), asm.Or.Reg(v, t), asm.RSh.Imm(v, 63))
		f.free(t)
	}
	return v
}
