//go:build linux

package pid

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/symbol"
)

// LinkMapWatcher follows the link maps of processes: the objects the
// dynamic linker loads (dlopen) and unloads (dlclose) after tracing has
// started, so that pid and USDT descriptions are matched against them
// too. It is rtld_db's event breakpoint done with a uprobe: glibc's
// dynamic linker calls _dl_debug_state (r_debug.r_brk) before and after
// each change of the link map, and a uprobe there, filtered to the
// process, runs a small program that counts the call in the process's
// entry of a map (Changed reads the counts) and, in the thread named to
// be held (a process dtrace ptraces), sends that thread HoldSignal: the
// tracer sees the signal stop, takes the hold (TakeHold) and lets the
// thread go once the new probes are attached, so that the first call
// into a library after dlopen() returns is traced.
type LinkMapWatcher struct {
	mu     sync.Mutex
	m      *ebpf.Map
	prog   *ebpf.Program
	links  map[int]io.Closer
	gens   map[int]uint64
	closed bool
}

// HoldSignal is the signal the watcher's program sends a held thread:
// one whose default action is to be ignored, so that it is harmless if a
// thread ever receives it unheld.
const HoldSignal = unix.SIGURG

// The map's value: the number of link-map changes seen, the thread to
// hold (0: none) and the holds sent and not yet taken.
const (
	lmGen     = 0
	lmHoldTID = 8
	lmPending = 12
	lmValue   = 16
)

// DebugStateSymbol is the dynamic linker's function it calls at every
// change of the link map (the address r_debug.r_brk holds).
const DebugStateSymbol = "_dl_debug_state"

// NewLinkMapWatcher loads the watcher's map and program.
func NewLinkMapWatcher() (*LinkMapWatcher, error) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Name: "dt_linkmap", Type: ebpf.Hash, KeySize: 4, ValueSize: lmValue, MaxEntries: 1024})
	if err != nil {
		return nil, fmt.Errorf("link map watcher: %w", err)
	}
	const out = "dt_lm_out"
	// Atomic adds to the map value (R9) at an offset.
	xadd := func(off int16, size asm.Size) asm.Instruction {
		ins := asm.StoreXAdd(asm.R9, asm.R1, size)
		ins.Offset = off
		return ins
	}
	insns := asm.Instructions{
		asm.FnGetCurrentPidTgid.Call(),
		asm.Mov.Reg(asm.R8, asm.R0),
		asm.RSh.Imm(asm.R0, 32),
		asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word),
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, out),
		asm.Mov.Reg(asm.R9, asm.R0),
		asm.Mov.Imm(asm.R1, 1),
		xadd(lmGen, asm.DWord),
		asm.LoadMem(asm.R1, asm.R9, lmHoldTID, asm.Word),
		asm.JEq.Imm(asm.R1, 0, out),
		asm.Mov.Reg32(asm.R2, asm.R8),
		asm.JNE.Reg(asm.R1, asm.R2, out),
		asm.Mov.Imm(asm.R1, 1),
		xadd(lmPending, asm.Word),
		asm.Mov.Imm(asm.R1, int32(HoldSignal)),
		asm.FnSendSignalThread.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(out),
		asm.Return(),
	}
	kind := ProgramKind()
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "dt_linkmap", Type: kind.Type, AttachType: kind.AttachType,
		Instructions: insns, License: "GPL"})
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("link map watcher: %w", err)
	}
	return &LinkMapWatcher{m: m, prog: prog, links: map[int]io.Closer{}, gens: map[int]uint64{}}, nil
}

// Watch follows process pid: a uprobe on its dynamic linker's
// _dl_debug_state. holdTID, when not 0, is a thread (one dtrace ptraces)
// that the program holds at each change (see HoldSignal). A process
// without a dynamic linker that has the symbol (a static executable) is
// an error.
func (w *LinkMapWatcher) Watch(proc *symbol.Process, holdTID int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("link map watcher closed")
	}
	if _, ok := w.links[proc.PID]; ok {
		return w.setHold(proc.PID, holdTID)
	}
	site, err := debugStateSite(proc)
	if err != nil {
		return err
	}
	if err := w.setHold(proc.PID, holdTID); err != nil {
		return err
	}
	l, err := AttachSites([]Site{site}, proc.PID, false, w.prog)
	if err != nil {
		_ = w.m.Delete(uint32(proc.PID))
		return fmt.Errorf("uprobe on %s: %w", DebugStateSymbol, err)
	}
	w.links[proc.PID] = l
	return nil
}

// SetHold names the thread of a watched process to hold (0: none).
func (w *LinkMapWatcher) SetHold(pid, holdTID int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.links[pid] == nil {
		return errors.New("process not watched")
	}
	return w.setHold(pid, holdTID)
}

func (w *LinkMapWatcher) setHold(pid, holdTID int) error {
	val := make([]byte, lmValue)
	if err := w.m.Lookup(uint32(pid), val); err != nil {
		val = make([]byte, lmValue)
	}
	binary.NativeEndian.PutUint32(val[lmHoldTID:], uint32(holdTID))
	return w.m.Put(uint32(pid), val)
}

// debugStateSite finds _dl_debug_state in the dynamic linker the process
// maps: the object that defines it (ld-linux-x86-64.so.2, ld-linux-aarch64.so.1).
func debugStateSite(proc *symbol.Process) (Site, error) {
	mods := proc.Modules()
	// The dynamic linker first: it is the object that defines it.
	for pass := 0; pass < 2; pass++ {
		for _, mod := range mods {
			if (pass == 0) != strings.HasPrefix(mod.Name, "ld") {
				continue
			}
			path := proc.OpenPath(mod)
			obj, err := symbol.LoadObject(path)
			if err != nil {
				continue
			}
			v, ok := obj.SymbolValue(DebugStateSymbol)
			if !ok {
				continue
			}
			if fo, ok := obj.FileOffset(v); ok {
				return Site{Path: path, FileOffset: fo}, nil
			}
		}
	}
	return Site{}, fmt.Errorf("process %d maps no dynamic linker with %s", proc.PID, DebugStateSymbol)
}

// Changed returns the watched processes whose link map changed since the
// last call.
func (w *LinkMapWatcher) Changed() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	var out []int
	val := make([]byte, lmValue)
	for pid := range w.links {
		if err := w.m.Lookup(uint32(pid), val); err != nil {
			continue
		}
		if g := binary.NativeEndian.Uint64(val[lmGen:]); g != w.gens[pid] {
			w.gens[pid] = g
			out = append(out, pid)
		}
	}
	return out
}

// TakeHold reports whether the program holds a thread of process pid
// (it sent HoldSignal that the tracer has not taken yet), and takes the
// hold: the tracer then suppresses the signal. A HoldSignal of another
// origin finds no hold and is passed on.
func (w *LinkMapWatcher) TakeHold(pid int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	val := make([]byte, lmValue)
	if err := w.m.Lookup(uint32(pid), val); err != nil {
		return false
	}
	n := binary.NativeEndian.Uint32(val[lmPending:])
	if n == 0 {
		return false
	}
	// The held thread is stopped: nothing else adds to its count.
	binary.NativeEndian.PutUint32(val[lmPending:], n-1)
	return w.m.Put(uint32(pid), val) == nil
}

// Close detaches the uprobes and frees the map and program.
func (w *LinkMapWatcher) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	var errs []error
	for _, l := range w.links {
		errs = append(errs, l.Close())
	}
	errs = append(errs, w.prog.Close(), w.m.Close())
	return errors.Join(errs...)
}
