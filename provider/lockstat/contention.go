package lockstat

import (
	"fmt"
	"io"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/internal/tracefs"
	"github.com/dtrace-go/dtrace/provider"
)

// Where the kernel offers no kprobes (fbt is unavailable), the probes
// that time contention come from the kernel's lock:contention_begin and
// lock:contention_end tracepoints (5.19 and later), which every sleeping
// and spinning lock's slow path passes with the lock and flags that say
// what kind of lock it is and how it waits. adaptive-block, adaptive-spin,
// rw-block, rw-spin and spin-spin are made from them; the probes that
// fire on every acquisition and release (adaptive-acquire, ...-release,
// ...) need the lock functions' entries and returns, and are not listed.
//
// A begin whose flags are the probe's stores {flags, time} under the
// thread and the lock; the end of that wait (successful: ret 0) fires
// with the lock and the time waited. A mutex first spins (MUTEX|SPIN)
// and, when spinning fails, begins again to sleep (MUTEX): that second
// begin ends the spin, so adaptive-spin fires then with the time spun.

// The contention tracepoints' flags (include/trace/events/lock.h).
const (
	lcbSpin  = 1 << 0
	lcbRead  = 1 << 1
	lcbWrite = 1 << 2
	lcbMutex = 1 << 5
)

// (LCB_F_RT 1<<3 and LCB_F_PERCPU 1<<4 mark rt-mutexes and per-CPU
// rw-semaphores, whose waits no lockstat probe times: a begin with either
// matches none of the probes' flags.)

// What a contention attachment is (its cookie).
const (
	cookieBegin = 1
	cookieEnd   = 2
)

// waitSpec is a probe made from the contention tracepoints: the begin
// flags it times, whether a sleeping mutex begin ends its wait (the spin
// of adaptive-spin) and whether args[2] is the reader/writer kind.
type waitSpec struct {
	begins   []int32
	spinEnd  bool
	kindArg2 bool
}

var waitSpecs = map[string]waitSpec{
	"adaptive-block": {begins: []int32{lcbMutex}},
	"adaptive-spin":  {begins: []int32{lcbMutex | lcbSpin}, spinEnd: true},
	"rw-block":       {begins: []int32{lcbRead, lcbWrite}, kindArg2: true},
	"rw-spin":        {begins: []int32{lcbSpin | lcbRead, lcbSpin | lcbWrite}, kindArg2: true},
	"spin-spin":      {begins: []int32{lcbSpin}},
}

// contention is what the tracepoints' formats say, read once.
type contention struct {
	once                      sync.Once
	why                       string // why there are none, or ""
	lockOff, flagsOff, retOff int16
}

// load reads the two tracepoints' formats.
func (c *contention) load() {
	c.once.Do(func() {
		root, err := kernel.MountTracefs()
		if err != nil {
			c.why = err.Error()
			return
		}
		field := func(f *tracefs.Format, name string, size int) (int16, error) {
			fl, ok := f.Field(name)
			if !ok || fl.Size != size {
				return 0, fmt.Errorf("lock:%s has no %d-byte field %s", f.Name, size, name)
			}
			return int16(fl.Offset), nil
		}
		begin, err := tracefs.ReadFormat(root, "lock", "contention_begin")
		if err != nil {
			c.why = "no lock:contention_begin tracepoint (kernels before 5.19)"
			return
		}
		end, err := tracefs.ReadFormat(root, "lock", "contention_end")
		if err != nil {
			c.why = "no lock:contention_end tracepoint (kernels before 5.19)"
			return
		}
		var errs [3]error
		c.lockOff, errs[0] = field(begin, "lock_addr", 8)
		c.flagsOff, errs[1] = field(begin, "flags", 4)
		c.retOff, errs[2] = field(end, "ret", 4)
		endLock, err := field(end, "lock_addr", 8)
		for _, e := range append(errs[:], err) {
			if e != nil {
				c.why = e.Error()
				return
			}
		}
		if endLock != c.lockOff {
			c.why = "lock:contention_begin and contention_end keep the lock at different offsets"
		}
	})
}

// waitMap returns (creating it) probe i's map of waits: key {pid_tgid,
// lock}, value {flags, start}.
func (pv *Provider) waitMap(i int) (*ebpf.Map, error) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if m := pv.maps[i]; m != nil {
		return m, nil
	}
	m, err := ebpf.NewMap(&ebpf.MapSpec{Name: "dt_lockwait", Type: ebpf.LRUHash, KeySize: 16, ValueSize: 16, MaxEntries: 8192})
	if err != nil {
		return nil, err
	}
	pv.maps[i] = m
	return m, nil
}

// waitPrologue is the prologue of probe i in the tracepoint mode.
func (pv *Provider) waitPrologue(i int, mstate int16) asm.Instructions {
	never := asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.JEq.Imm(asm.R0, 0, provider.SkipLabel)}
	ws := waitSpecs[specs[i].name]
	m, err := pv.waitMap(i)
	if err != nil {
		return never
	}
	c := &pv.cont
	const pfx = "dt_lockwait_"
	// The key {pid_tgid, lock} lives in the last two argument slots
	// until the clauses run; the value is built in args[0..1].
	b := newBuilder(m, mstate, abi.MStateNArgs-2)
	arg, keyOff, mapPtr, key, emit := b.arg, b.keyOff, b.mapPtr, b.key, b.emit
	skip := asm.Ja.Label(provider.SkipLabel)
	emit(asm.LoadMem(asm.R0, asm.R6, c.lockOff, asm.DWord), asm.StoreMem(asm.R7, keyOff+8, asm.R0, asm.DWord))
	emit(asm.Mov.Reg(asm.R1, asm.R6), asm.FnGetAttachCookie.Call(), asm.JEq.Imm(asm.R0, cookieEnd, pfx+"end"))

	// A begin: one of the probe's kinds of wait starts; store it.
	emit(asm.LoadMem(asm.R9, asm.R6, c.flagsOff, asm.Word))
	for _, v := range ws.begins {
		emit(asm.JEq.Imm(asm.R9, v, pfx+"store"))
	}
	if ws.spinEnd {
		emit(asm.JEq.Imm(asm.R9, lcbMutex, pfx+"spun"))
	}
	emit(skip)
	emit(asm.FnKtimeGetNs.Call().WithSymbol(pfx+"store"), asm.StoreMem(asm.R7, arg(1), asm.R0, asm.DWord),
		asm.StoreMem(asm.R7, arg(0), asm.R9, asm.DWord))
	emit(mapPtr())
	emit(key()...)
	emit(asm.Mov.Reg(asm.R3, asm.R7), asm.Add.Imm(asm.R3, int32(arg(0))), asm.Mov.Imm(asm.R4, 0),
		asm.FnMapUpdateElem.Call(), skip)

	// An end fires if the wait succeeded (ret 0); a mutex's sleep
	// beginning ends its spin, which succeeded as far as spinning goes.
	emit(asm.LoadMem(asm.R8, asm.R6, c.retOff, asm.Word).WithSymbol(pfx + "end"))
	if ws.spinEnd {
		emit(asm.Ja.Label(pfx+"look"), asm.Mov.Imm(asm.R8, 0).WithSymbol(pfx+"spun"))
	}
	emit(mapPtr().WithSymbol(pfx + "look"))
	emit(key()...)
	emit(asm.FnMapLookupElem.Call(), asm.JEq.Imm(asm.R0, 0, provider.SkipLabel), asm.Mov.Reg(asm.R9, asm.R0))
	emit(asm.LoadMem(asm.R1, asm.R9, 0, asm.DWord), asm.StoreMem(asm.R7, arg(2), asm.R1, asm.DWord))
	emit(asm.FnKtimeGetNs.Call(), asm.LoadMem(asm.R1, asm.R9, 8, asm.DWord), asm.Sub.Reg(asm.R0, asm.R1),
		asm.StoreMem(asm.R7, arg(1), asm.R0, asm.DWord))
	emit(mapPtr())
	emit(key()...)
	emit(asm.FnMapDeleteElem.Call(), asm.JNE.Imm(asm.R8, 0, provider.SkipLabel))
	if ws.kindArg2 {
		// DTrace's kinds: RW_WRITER 0, RW_READER 1.
		emit(asm.LoadMem(asm.R0, asm.R7, arg(2), asm.DWord), asm.RSh.Imm(asm.R0, 1), asm.And.Imm(asm.R0, 1),
			asm.StoreMem(asm.R7, arg(2), asm.R0, asm.DWord))
	} else {
		emit(provider.StoreImmDW(asm.R7, arg(2), 0))
	}
	emit(asm.LoadMem(asm.R0, asm.R7, keyOff+8, asm.DWord), asm.StoreMem(asm.R7, arg(0), asm.R0, asm.DWord))
	emit(provider.StoreImmDW(asm.R7, keyOff, 0), provider.StoreImmDW(asm.R7, keyOff+8, 0))
	return b.in
}

// waitAttach links the program to both tracepoints.
func waitAttach(p *provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	b, err := provider.AttachTracepointCookie(p, "lock", "contention_begin", prog, cookieBegin)
	if err != nil {
		return nil, err
	}
	e, err := provider.AttachTracepointCookie(p, "lock", "contention_end", prog, cookieEnd)
	if err != nil {
		b.Close()
		return nil, err
	}
	return provider.Closers(b, e), nil
}
