package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/program"
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
	r := f.onlyArg(c)
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
	v := f.loadScalar(r, program.TypeULong, false)
	f.emit(asm.And.Imm(v, ^int32(mutexFlags)))
	if name == "mutex_owned" {
		// v != 0 as 0 or 1: the sign bit of v | -v.
		t := f.alloc()
		f.emit(asm.Mov.Reg(t, v), asm.Neg.Imm(t, 0), asm.Or.Reg(v, t), asm.RSh.Imm(v, 63))
		f.free(t)
	}
	return v
}

// Linux's queued rwlock (the arch_rwlock_t that starts every rwlock_t
// outside PREEMPT_RT) keeps a count word: the writer byte is 0xff while
// a writer holds the lock, bit 8 marks a waiting writer, and the readers
// are counted from bit 9 up.
const (
	qrwWriterLocked = 0xff
	qrwWriterMask   = 0x1ff
	qrwReaderShift  = 9
)

// subrRw compiles rw_read_held(), rw_write_held() and rw_iswriter() on a
// Linux rwlock_t: held by readers, held by a writer, held or wanted by a
// writer (illumos's meanings), from the count word at its start.
func (f *fn) subrRw(c *syntax.CallExpr, name string) asm.Register {
	r := f.onlyArg(c)
	v := f.loadScalar(r, program.TypeUInt, false)
	switch name {
	case "rw_read_held":
		f.emit(asm.RSh.Imm32(v, qrwReaderShift))
	case "rw_write_held":
		f.emit(asm.And.Imm(v, qrwWriterLocked), asm.Xor.Imm(v, qrwWriterLocked))
		// v == 0 when held: make it 1, anything else 0.
		f.emit(asm.Add.Imm(v, -1), asm.RSh.Imm(v, 63))
		return v
	default:
		f.emit(asm.And.Imm(v, qrwWriterMask))
	}
	// v != 0 as 0 or 1.
	t := f.alloc()
	f.emit(asm.Mov.Reg(t, v), asm.Neg.Imm(t, 0), asm.Or.Reg(v, t), asm.RSh.Imm(v, 63))
	f.free(t)
	return v
}
