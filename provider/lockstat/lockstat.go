// Package lockstat is the lockstat provider with the probes dtrace-utils
// has on Linux (adaptive-acquire, adaptive-acquire-error, adaptive-block,
// adaptive-release, adaptive-spin, rw-acquire, rw-block, rw-release,
// rw-spin, spin-acquire, spin-release, spin-spin), all
// lockstat:vmlinux::NAME, built on kernel functions as dtrace-utils builds
// them: mutex_lock and mutex_unlock for adaptive locks (with
// schedule_preempt_disabled for the time blocked and _raw_spin_lock for
// the time spinning), the _raw_spin_* and _raw_read_*/_raw_write_*
// functions for spin and reader/writer locks, the queued spin and rwlock
// slow paths for spinning, and the rwsem slow paths for rw-block.
//
// A probe's program is a kprobe program attached to the entry or return
// of each of its functions, each link carrying a BPF cookie that tells the
// prologue what that attachment does: entries remember the lock (and a
// start time) in a per-thread map and end the firing; returns (and the
// release functions' entries) fill the arguments and run the clauses.
// Arguments: args[0] the lock; adaptive-block, adaptive-spin, rw-spin,
// rw-block and spin-spin have the time blocked or spun in ns in args[1];
// rw-acquire and rw-release the kind (0 writer, 1 reader) in args[1],
// rw-spin and rw-block in args[2]; adaptive-acquire-error the error in
// args[1].
//
// The probes exist where the kernel offers kprobes (fbt lists the
// functions); a probe whose functions the kernel lacks is not listed.
// Without kprobes, the probes that time waits are made from the kernel's
// contention tracepoints (contention.go).
package lockstat

import (
	"fmt"
	"io"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/fbt"
)

// Name is the provider's name.
const Name = "lockstat"

// What an attachment does (the low byte of its cookie).
const (
	roleStash     = 1 // entry: remember the lock
	roleStashTime = 2 // entry: remember the lock and the time
	roleBlockFrom = 3 // entry of the sleep: note when it began
	roleBlockTo   = 4 // return of the sleep: add the time slept
	roleSpinFrom  = 5 // entry of a spin inside the lock: note when it began (once)
	roleFireEntry = 6 // entry: fire with the lock from the first argument
	roleFireRet   = 7 // return: fire with the remembered lock
)

// Checks a return makes before firing (second byte of the cookie).
const (
	checkNone  = 0
	checkTry   = 1 // trylock: fire only if it returned 1
	checkErr   = 2 // fire only on an error; args[1] = the error
	checkBlock = 3 // fire only if it slept; args[1] = the time slept
	checkSpin  = 4 // fire only if it spun; args[1] = now - start
)

// Reader/writer kinds as DTrace numbers them, +1 (0: no kind) in the
// third byte of the cookie; the fourth byte is the argument they go to.
const (
	kindWriter = 1 // RW_WRITER (0)
	kindReader = 2 // RW_READER (1)
)

// point is one attachment: functions matching a glob, at entry or return.
type point struct {
	glob          string
	ret           bool
	role, check   int
	kind, kindArg int
}

func (pt point) cookie() uint64 {
	return uint64(pt.role) | uint64(pt.check)<<8 | uint64(pt.kind)<<16 | uint64(pt.kindArg)<<24
}

// spec is one probe.
type spec struct {
	name   string
	args   []string
	points []point
}

// held is a lock function: its entry remembers the lock, its return
// fires after check, with kind (if any) in the argument around names.
type held struct {
	glob        string
	check, kind int
}

// around returns the points of a probe that remembers the lock at the
// entry of each of fns (with role), then has mid, then fires at their
// returns.
func around(role, kindArg int, mid []point, fns ...held) []point {
	var pts []point
	for _, f := range fns {
		pts = append(pts, point{glob: f.glob, role: role})
	}
	pts = append(pts, mid...)
	for _, f := range fns {
		pt := point{glob: f.glob, ret: true, role: roleFireRet, check: f.check, kind: f.kind}
		if f.kind != 0 {
			pt.kindArg = kindArg
		}
		pts = append(pts, pt)
	}
	return pts
}

var specs = []spec{
	{"adaptive-acquire", []string{"struct mutex *"}, around(roleStash, 0, nil, held{glob: "mutex_lock"})},
	{"adaptive-acquire-error", []string{"struct mutex *", "int"}, around(roleStash, 0, nil,
		held{"*mutex_lock_killable", checkErr, 0}, held{"*mutex_lock_interruptible", checkErr, 0})},
	{"adaptive-block", []string{"struct mutex *", "uint64_t"}, around(roleStash, 0, []point{
		{glob: "schedule_preempt_disabled", role: roleBlockFrom},
		{glob: "schedule_preempt_disabled", ret: true, role: roleBlockTo},
	}, held{"mutex_lock", checkBlock, 0})},
	{"adaptive-release", []string{"struct mutex *"}, []point{
		{glob: "mutex_unlock", role: roleFireEntry},
	}},
	{"adaptive-spin", []string{"struct mutex *", "uint64_t"}, around(roleStash, 0, []point{
		{glob: "_raw_spin_lock", role: roleSpinFrom},
	}, held{"mutex_lock", checkSpin, 0})},
	{"rw-acquire", []string{"struct rwlock *", "int"}, around(roleStash, 1, nil,
		held{"_raw_read_lock*", checkNone, kindReader}, held{"_raw_read_trylock*", checkTry, kindReader},
		held{"_raw_write_lock*", checkNone, kindWriter}, held{"_raw_write_trylock*", checkTry, kindWriter})},
	{"rw-block", []string{"struct rw_semaphore *", "uint64_t", "int"}, around(roleStashTime, 2, nil,
		held{"rwsem_down_read_slowpath", checkSpin, kindReader}, held{"rwsem_down_write_slowpath", checkSpin, kindWriter})},
	{"rw-release", []string{"struct rwlock *", "int"}, []point{
		{glob: "_raw_read_unlock*", role: roleFireEntry, kind: kindReader, kindArg: 1},
		{glob: "_raw_write_unlock*", role: roleFireEntry, kind: kindWriter, kindArg: 1},
	}},
	{"rw-spin", []string{"struct rwlock *", "uint64_t", "int"}, around(roleStashTime, 2, nil,
		held{"queued_read_lock_slowpath", checkSpin, kindReader}, held{"queued_write_lock_slowpath", checkSpin, kindWriter})},
	{"spin-acquire", []string{"spinlock_t *"}, around(roleStash, 0, nil,
		held{glob: "_raw_spin_lock*"}, held{"_raw_spin_trylock*", checkTry, 0})},
	{"spin-release", []string{"spinlock_t *"}, []point{
		{glob: "_raw_spin_unlock*", role: roleFireEntry},
	}},
	{"spin-spin", []string{"spinlock_t *", "uint64_t"}, around(roleStashTime, 0, nil,
		held{"queued_spin_lock_slowpath", checkSpin, 0}, held{"native_queued_spin_lock_slowpath", checkSpin, 0})},
}

// target is a resolved attachment: one function.
type target struct {
	fn  string
	pt  point
	ret bool
}

// Provider is the lockstat provider.
type Provider struct {
	fbt *fbt.Provider

	once    sync.Once
	targets [][]target // per spec

	mu   sync.Mutex
	maps map[int]*ebpf.Map // per spec: the per-thread state

	cont contention // the tracepoint mode, used where fbt is unavailable
}

// waits says whether the probes come from the contention tracepoints:
// there are no kprobes, and the tracepoints are there.
func (pv *Provider) waits() bool {
	if pv.fbt.Unavailable() == "" {
		return false
	}
	pv.cont.load()
	return pv.cont.why == ""
}

// New returns the lockstat provider, finding kernel functions through fp.
func New(fp *fbt.Provider) *Provider {
	return &Provider{fbt: fp, maps: map[int]*ebpf.Map{}}
}

// Name returns "lockstat".
func (*Provider) Name() string { return Name }

// ProbeNames returns the probe names, so that other descriptions (BEGIN)
// never read the kernel's function list.
func (*Provider) ProbeNames() []string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.name
	}
	return names
}

// Unavailable says why there are no lockstat probes, or "".
func (pv *Provider) Unavailable() string {
	if why := pv.fbt.Unavailable(); why != "" && !pv.waits() {
		return "this kernel does not offer lockstat: it is built on fbt, and " + why + "; nor are there contention tracepoints: " + pv.cont.why
	}
	return ""
}

func (pv *Provider) load() {
	pv.once.Do(func() {
		pv.targets = make([][]target, len(specs))
		for i, s := range specs {
			fires := false
			for _, pt := range s.points {
				for _, fn := range pv.fbt.Functions(fbt.Kernel, pt.glob) {
					pv.targets[i] = append(pv.targets[i], target{fn: fn, pt: pt, ret: pt.ret})
					fires = fires || pt.role == roleFireEntry || pt.role == roleFireRet
				}
			}
			if !fires {
				pv.targets[i] = nil
			}
		}
	})
}

// Probes returns the probes matching d whose functions exist.
func (pv *Provider) Probes(d provider.Desc) ([]*provider.Probe, error) {
	var out []*provider.Probe
	for i, s := range specs {
		if !d.MatchesIn(fbt.Kernel, "", s.name) {
			continue
		}
		if pv.waits() {
			if _, ok := waitSpecs[s.name]; ok {
				out = append(out, &provider.Probe{Provider: Name, Module: fbt.Kernel, Name: s.name, Data: i})
			}
			continue
		}
		pv.load()
		if len(pv.targets[i]) == 0 {
			continue
		}
		out = append(out, &provider.Probe{Provider: Name, Module: fbt.Kernel, Name: s.name, Data: i})
	}
	return out, nil
}

func (pv *Provider) spec(p *provider.Probe) (int, error) {
	i, ok := p.Data.(int)
	if !ok || p.Owner != nil && p.Owner != provider.Provider(pv) || i < 0 || i >= len(specs) {
		return 0, fmt.Errorf("lockstat: probe %s was not made by this provider", p)
	}
	if !pv.waits() {
		pv.load()
	}
	return i, nil
}

// Program says: a kprobe program, or a tracepoint program for the
// contention tracepoints.
func (pv *Provider) Program(*provider.Probe) provider.ProgramKind {
	if pv.waits() {
		return provider.ProgramKind{Type: ebpf.TracePoint}
	}
	return provider.ProgramKind{Type: ebpf.Kprobe}
}

// ArgTypes returns the C types of the probe's args[].
func (pv *Provider) ArgTypes(p *provider.Probe) ([]string, error) {
	i, err := pv.spec(p)
	if err != nil {
		return nil, err
	}
	return specs[i].args, nil
}

// XArgTypes keeps the native types; saying so lets them be looked up
// among the kernel's.
func (pv *Provider) XArgTypes(p *provider.Probe) ([]string, error) {
	i, err := pv.spec(p)
	if err != nil {
		return nil, err
	}
	return make([]string, len(specs[i].args)), nil
}

// stateMap returns (creating it) the probe's per-thread map: key the
// thread's pid_tgid, value {lock, start, sleep start, time slept}.
func (pv *Provider) stateMap(i int) (*ebpf.Map, error) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if m := pv.maps[i]; m != nil {
		return m, nil
	}
	m, err := ebpf.NewMap(&ebpf.MapSpec{Name: "dt_lockstat", Type: ebpf.Hash, KeySize: 8, ValueSize: valueSize, MaxEntries: 8192})
	if err != nil {
		return nil, err
	}
	pv.maps[i] = m
	return m, nil
}

// The per-thread state.
const (
	offLock   = 0
	offStart  = 8
	offFrom   = 16
	offSlept  = 24
	valueSize = 32
)

// Prologue dispatches on the attachment's cookie.
func (pv *Provider) Prologue(p *provider.Probe, mstate int16) asm.Instructions {
	never := asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.JEq.Imm(asm.R0, 0, provider.SkipLabel)}
	i, err := pv.spec(p)
	if err != nil {
		return never
	}
	if pv.waits() {
		return pv.waitPrologue(i, mstate)
	}
	m, err := pv.stateMap(i)
	if err != nil {
		return never
	}
	const pfx = "dt_lockstat_"
	// The key lives in the last argument slot until the clauses run.
	b := newBuilder(m, mstate, abi.MStateNArgs-1)
	arg, keyOff, mapPtr, key, emit := b.arg, b.keyOff, b.mapPtr, b.key, b.emit
	skip := asm.Ja.Label(provider.SkipLabel)
	emit(asm.Mov.Reg(asm.R1, asm.R6), asm.FnGetAttachCookie.Call(), asm.Mov.Reg(asm.R8, asm.R0))
	emit(asm.Mov.Reg(asm.R0, asm.R8), asm.And.Imm(asm.R0, 0xff))
	for _, r := range []struct {
		role  int
		label string
	}{{roleStash, "stash"}, {roleStashTime, "stashtime"}, {roleBlockFrom, "bfrom"}, {roleBlockTo, "bto"},
		{roleSpinFrom, "sfrom"}, {roleFireEntry, "fentry"}, {roleFireRet, "fret"}} {
		emit(asm.JEq.Imm(asm.R0, int32(r.role), pfx+r.label))
	}
	emit(skip)

	// stash / stashtime: arg[0..3] = {lock, start, 0, 0} -> map.
	emit(asm.Mov.Imm(asm.R0, 0).WithSymbol(pfx + "stash"))
	emit(asm.Ja.Label(pfx + "store"))
	emit(asm.FnKtimeGetNs.Call().WithSymbol(pfx + "stashtime"))
	emit(asm.StoreMem(asm.R7, arg(1), asm.R0, asm.DWord).WithSymbol(pfx + "store"))
	emit(asm.LoadMem(asm.R0, asm.R6, argReg0, asm.DWord), asm.StoreMem(asm.R7, arg(0), asm.R0, asm.DWord))
	emit(mapPtr())
	emit(key()...)
	emit(asm.Mov.Reg(asm.R3, asm.R7), asm.Add.Imm(asm.R3, int32(arg(0))), asm.Mov.Imm(asm.R4, 0),
		asm.FnMapUpdateElem.Call(), skip)

	// lookup: R9 = this thread's state, or skip.
	lookup := func(label string) {
		emit(mapPtr().WithSymbol(label))
		emit(key()...)
		emit(asm.FnMapLookupElem.Call(), asm.JEq.Imm(asm.R0, 0, provider.SkipLabel), asm.Mov.Reg(asm.R9, asm.R0))
	}
	lookup(pfx + "bfrom")
	emit(asm.FnKtimeGetNs.Call(), asm.StoreMem(asm.R9, offFrom, asm.R0, asm.DWord), skip)
	lookup(pfx + "bto")
	emit(asm.FnKtimeGetNs.Call(), asm.LoadMem(asm.R1, asm.R9, offFrom, asm.DWord),
		asm.JEq.Imm(asm.R1, 0, provider.SkipLabel),
		asm.Sub.Reg(asm.R0, asm.R1), asm.LoadMem(asm.R1, asm.R9, offSlept, asm.DWord),
		asm.Add.Reg(asm.R1, asm.R0), asm.StoreMem(asm.R9, offSlept, asm.R1, asm.DWord), skip)
	lookup(pfx + "sfrom")
	emit(asm.LoadMem(asm.R1, asm.R9, offStart, asm.DWord), asm.JNE.Imm(asm.R1, 0, provider.SkipLabel),
		asm.FnKtimeGetNs.Call(), asm.StoreMem(asm.R9, offStart, asm.R0, asm.DWord), skip)

	// fire at entry: args[0] = the first argument.
	emit(asm.LoadMem(asm.R0, asm.R6, argReg0, asm.DWord).WithSymbol(pfx + "fentry"))
	emit(asm.StoreMem(asm.R7, arg(0), asm.R0, asm.DWord), asm.Ja.Label(pfx+"kind"))

	// fire at return: copy the state, forget it, check.
	lookup(pfx + "fret")
	emit(asm.LoadMem(asm.R0, asm.R9, offLock, asm.DWord), asm.StoreMem(asm.R7, arg(0), asm.R0, asm.DWord))
	emit(asm.LoadMem(asm.R0, asm.R9, offStart, asm.DWord), asm.StoreMem(asm.R7, arg(1), asm.R0, asm.DWord))
	emit(asm.LoadMem(asm.R0, asm.R9, offSlept, asm.DWord), asm.StoreMem(asm.R7, arg(2), asm.R0, asm.DWord))
	emit(mapPtr())
	emit(key()...)
	emit(asm.FnMapDeleteElem.Call())
	emit(asm.Mov.Reg(asm.R0, asm.R8), asm.RSh.Imm(asm.R0, 8), asm.And.Imm(asm.R0, 0xff))
	emit(asm.JEq.Imm(asm.R0, checkTry, pfx+"try"), asm.JEq.Imm(asm.R0, checkErr, pfx+"err"),
		asm.JEq.Imm(asm.R0, checkBlock, pfx+"block"), asm.JEq.Imm(asm.R0, checkSpin, pfx+"spin"))
	emit(provider.StoreImmDW(asm.R7, arg(1), 0), provider.StoreImmDW(asm.R7, arg(2), 0), asm.Ja.Label(pfx+"kind"))
	// trylock: fire only when it returned 1.
	emit(asm.LoadMem(asm.R0, asm.R6, retReg, asm.DWord).WithSymbol(pfx+"try"), asm.LSh.Imm(asm.R0, 32), asm.RSh.Imm(asm.R0, 32))
	emit(asm.JNE.Imm(asm.R0, 1, provider.SkipLabel))
	emit(provider.StoreImmDW(asm.R7, arg(1), 0), provider.StoreImmDW(asm.R7, arg(2), 0), asm.Ja.Label(pfx+"kind"))
	// error: fire only on a non-zero (int) return, args[1] = it.
	emit(asm.LoadMem(asm.R0, asm.R6, retReg, asm.DWord).WithSymbol(pfx+"err"), asm.LSh.Imm(asm.R0, 32), asm.ArSh.Imm(asm.R0, 32))
	emit(asm.JEq.Imm(asm.R0, 0, provider.SkipLabel), asm.StoreMem(asm.R7, arg(1), asm.R0, asm.DWord),
		provider.StoreImmDW(asm.R7, arg(2), 0), asm.Ja.Label(pfx+"kind"))
	// block: fire only if it slept; args[1] = the time slept.
	emit(asm.LoadMem(asm.R0, asm.R7, arg(2), asm.DWord).WithSymbol(pfx + "block"))
	emit(asm.JEq.Imm(asm.R0, 0, provider.SkipLabel), asm.StoreMem(asm.R7, arg(1), asm.R0, asm.DWord),
		provider.StoreImmDW(asm.R7, arg(2), 0), asm.Ja.Label(pfx+"kind"))
	// spin: fire only if it spun; args[1] = now - start.
	emit(asm.LoadMem(asm.R1, asm.R7, arg(1), asm.DWord).WithSymbol(pfx + "spin"))
	emit(asm.JEq.Imm(asm.R1, 0, provider.SkipLabel), asm.FnKtimeGetNs.Call(),
		asm.LoadMem(asm.R1, asm.R7, arg(1), asm.DWord), asm.Sub.Reg(asm.R0, asm.R1),
		asm.StoreMem(asm.R7, arg(1), asm.R0, asm.DWord), provider.StoreImmDW(asm.R7, arg(2), 0))

	// kind: the reader/writer kind into the argument the cookie names.
	emit(asm.Mov.Reg(asm.R0, asm.R8).WithSymbol(pfx+"kind"), asm.RSh.Imm(asm.R0, 16), asm.And.Imm(asm.R0, 0xff))
	emit(asm.JEq.Imm(asm.R0, 0, pfx+"end"), asm.Add.Imm(asm.R0, -1))
	emit(asm.Mov.Reg(asm.R1, asm.R8), asm.RSh.Imm(asm.R1, 24), asm.And.Imm(asm.R1, 0xff))
	emit(asm.JEq.Imm(asm.R1, 2, pfx+"kind2"), asm.StoreMem(asm.R7, arg(1), asm.R0, asm.DWord), asm.Ja.Label(pfx+"end"))
	emit(asm.StoreMem(asm.R7, arg(2), asm.R0, asm.DWord).WithSymbol(pfx + "kind2"))
	// The key's slot is an argument again.
	emit(provider.StoreImmDW(asm.R7, keyOff, 0).WithSymbol(pfx + "end"))
	return b.in
}

// builder holds what both prologues build with: the probe's map, the
// mstate argument slots, the key's slot (the pid_tgid, stored first) and
// the instructions so far, which begin by zeroing the arguments.
type builder struct {
	m      *ebpf.Map
	mstate int16
	keyOff int16
	in     asm.Instructions
}

func newBuilder(m *ebpf.Map, mstate int16, keySlot int) *builder {
	b := &builder{m: m, mstate: mstate}
	b.keyOff = b.arg(keySlot)
	for n := 0; n < abi.MStateNArgs; n++ {
		b.emit(provider.StoreImmDW(asm.R7, b.arg(n), 0))
	}
	b.emit(asm.FnGetCurrentPidTgid.Call(), asm.StoreMem(asm.R7, b.keyOff, asm.R0, asm.DWord))
	return b
}

// arg is the offset from R7 of mstate's argument n.
func (b *builder) arg(n int) int16 { return b.mstate + abi.MStateArgs + int16(8*n) }

func (b *builder) emit(ins ...asm.Instruction) { b.in = append(b.in, ins...) }

// mapPtr loads the map into R1.
func (b *builder) mapPtr() asm.Instruction {
	ins := asm.LoadMapPtr(asm.R1, 0)
	ins.AssociateMap(b.m)
	return ins
}

// key points R2 at the key.
func (b *builder) key() asm.Instructions {
	return asm.Instructions{asm.Mov.Reg(asm.R2, asm.R7), asm.Add.Imm(asm.R2, int32(b.keyOff))}
}

// Attach links the program to each of the probe's functions, the cookie
// telling the prologue what the attachment does.
func (pv *Provider) Attach(p *provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	i, err := pv.spec(p)
	if err != nil {
		return nil, err
	}
	if pv.waits() {
		return waitAttach(p, prog)
	}
	if len(pv.targets[i]) == 0 {
		return nil, fmt.Errorf("attach %s: the kernel has none of its functions", p)
	}
	return attach(p, prog, pv.targets[i])
}
