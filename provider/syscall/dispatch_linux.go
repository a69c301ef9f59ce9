package syscall

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
)

// maxSyscalls bounds the system call numbers a dispatcher knows, native
// and i386 each: its program array holds twice as many slots, the
// compat system calls' from compatBase on.
const maxSyscalls = compatBase

// dispatcher runs wide probes: one program on each raw syscall tracepoint
// (sys_enter, sys_exit) tail-calls the probe program stored at the system
// call's number in a program array, so a system call nobody traces costs
// one short program, however many probes are enabled. (Attaching every
// probe's program to the tracepoint instead ran them all on every system
// call: some 2 µs per call for syscall:::entry.)
type dispatcher struct {
	mu    sync.Mutex
	sides [2]*dispatchSide // sys_enter, sys_exit
}

type dispatchSide struct {
	progs *ebpf.Map // PROG_ARRAY indexed by system call number
	prog  *ebpf.Program
	link  link.Link
	users int
}

// side returns the index of a probe's side: 0 entry, 1 return.
func side(entry bool) int {
	if entry {
		return 0
	}
	return 1
}

var tracepoints = [2]string{"sys_enter", "sys_exit"}

// add stores prog at each of nrs (slots: system call numbers, or
// compatBase plus i386 numbers) in the side's program array, creating the
// array, the dispatcher program and its attachment on first use;
// status is where the dispatcher finds thread_info.status.
func (d *dispatcher) add(entry bool, nrs []int32, status taskStatus, prog *ebpf.Program) (io.Closer, error) {
	for _, nr := range nrs {
		if nr < 0 || nr >= 2*maxSyscalls {
			return nil, fmt.Errorf("system call slot %d out of range", nr)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	i := side(entry)
	s := d.sides[i]
	if s == nil {
		var err error
		if s, err = newDispatchSide(entry, status); err != nil {
			return nil, err
		}
		d.sides[i] = s
	}
	e := &dispatchEntry{d: d, side: i}
	s.users++
	for _, nr := range nrs {
		if err := s.progs.Put(uint32(nr), prog); err != nil {
			e.remove()
			return nil, fmt.Errorf("add to %s dispatcher: %w", tracepoints[i], err)
		}
		e.nrs = append(e.nrs, uint32(nr))
	}
	return e, nil
}

// release closes a side nobody uses any more.
func (d *dispatcher) release(i int) {
	s := d.sides[i]
	if s == nil || s.users > 0 {
		return
	}
	// Detach first, so the program never runs on a half-closed array.
	if s.link != nil {
		s.link.Close()
	}
	s.prog.Close()
	s.progs.Close()
	d.sides[i] = nil
}

// dispatchEntry is one program stored at some system call numbers.
type dispatchEntry struct {
	d    *dispatcher
	side int
	nrs  []uint32
	done bool
}

// Close removes the program from the array.
func (e *dispatchEntry) Close() error {
	e.d.mu.Lock()
	defer e.d.mu.Unlock()
	return e.remove()
}

// remove is Close with the dispatcher locked.
func (e *dispatchEntry) remove() error {
	if e.done {
		return nil
	}
	e.done = true
	s := e.d.sides[e.side]
	var first error
	for _, nr := range e.nrs {
		if err := s.progs.Delete(nr); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) && first == nil {
			first = err
		}
	}
	s.users--
	e.d.release(e.side)
	return first
}

func newDispatchSide(entry bool, status taskStatus) (_ *dispatchSide, err error) {
	s := &dispatchSide{}
	defer func() {
		if err != nil {
			if s.prog != nil {
				s.prog.Close()
			}
			if s.progs != nil {
				s.progs.Close()
			}
		}
	}()
	s.progs, err = ebpf.NewMap(&ebpf.MapSpec{Name: "dt_syscalls", Type: ebpf.ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: 2 * maxSyscalls})
	if err != nil {
		return nil, fmt.Errorf("create syscall dispatch map: %w", err)
	}
	insns := dispatchInsns(entry, status)
	if err := insns.AssociateMap("dt_syscalls", s.progs); err != nil {
		return nil, err
	}
	tp := tracepoints[side(entry)]
	s.prog, err = ebpf.NewProgram(&ebpf.ProgramSpec{Name: "dt_" + tp, Type: ebpf.RawTracepoint, License: "GPL", Instructions: insns})
	if err != nil {
		return nil, fmt.Errorf("load %s dispatcher: %w", tp, err)
	}
	s.link, err = link.AttachRawTracepoint(link.RawTracepointOptions{Name: tp, Program: s.prog})
	if err != nil {
		return nil, fmt.Errorf("attach %s dispatcher: %w", tp, err)
	}
	return s, nil
}

// dispatchInsns is the dispatcher: the system call number is the second
// argument of sys_enter; on sys_exit it is read from the saved registers
// (the second argument is the return value). A compat task's system call
// (thread_info.status has TS_COMPAT) is an i386 number: its
// slot is compatBase further.
func dispatchInsns(entry bool, status taskStatus) asm.Instructions {
	insns := asm.Instructions{asm.Mov.Reg(asm.R6, asm.R1)}
	if entry {
		insns = append(insns, asm.LoadMem(asm.R9, asm.R6, 8, asm.DWord))
	} else {
		insns = append(insns, readRegs(asm.RFP, -8, 8, regsOrigAX, "out")...)
		insns = append(insns, asm.LoadMem(asm.R9, asm.RFP, -8, asm.DWord))
	}
	insns = append(insns,
		// Unsigned: -1 (no system call) is out of range too.
		asm.JGE.Imm(asm.R9, maxSyscalls, "out"))
	insns = append(insns, compatFlag(asm.R8, asm.RFP, -16, status)...)
	return append(insns,
		asm.Mul.Imm(asm.R8, compatBase),
		asm.Add.Reg(asm.R8, asm.R9),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.LoadMapPtr(asm.R2, 0).WithReference("dt_syscalls"),
		asm.Mov.Reg(asm.R3, asm.R8),
		asm.FnTailCall.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	)
}
