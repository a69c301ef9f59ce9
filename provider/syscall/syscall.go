package syscall

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/internal/tracefs"
	"github.com/dtrace-go/dtrace/provider"
)

// maxErrno is the largest error number a negative return value can carry
// (the kernel's MAX_ERRNO).
const maxErrno = 4095

// Names of the provider, its module and its probes.
const (
	Name   = "syscall"
	Module = "vmlinux"
	Entry  = "entry"
	Return = "return"
)

// The tracefs group and the event name prefixes.
const (
	group       = "syscalls"
	enterPrefix = "sys_enter_"
	exitPrefix  = "sys_exit_"
)

// WideThreshold is the number of probes above which one description makes
// its probes wide: they then run from the raw sys_enter and sys_exit
// tracepoints, dispatched by system call number, instead of on each system
// call's own tracepoint. Detaching a program from a syscalls tracepoint
// waits for an RCU grace period (some 70 ms, one after the other), which
// made dtrace -n syscall::: take most of a minute to exit; the dispatcher
// detaches at once. A description of one system call (its entry and
// return) keeps the exact tracepoints, which ignore 32-bit compat tasks,
// unless SetCompat asked for them.
const WideThreshold = 2

// Provider is the syscall provider. It reads the list of system calls from
// tracefs once, on first use.
type Provider struct {
	once  sync.Once
	root  string
	funcs []string // system calls in available_events order
	has   map[string][2]bool

	mu      sync.Mutex
	formats map[string]*tracefs.Format // by event name
	states  map[string]*probeData      // by event name

	dispatch dispatcher // runs the wide probes

	compat       bool // SetCompat: probes with an i386 number are wide
	memberOffset func(structName, member string) (uint32, error)
	status       taskStatus // thread_info.status, once known
}

// probeData is what a probe made by this provider carries. Probes of the
// same name share one, so that a description seen after the registry
// interned a probe can still make it wide.
type probeData struct {
	event string // the tracepoint, sys_enter_NAME or sys_exit_NAME
	entry bool
	nr    int32   // system call number, -1 if unknown
	nrs32 []int32 // its numbers for 32-bit (compat) tasks (numbers32)

	wide   bool // run on the raw tracepoint
	frozen bool // the mode was used: it may no longer change
}

// New returns the syscall provider.
func New() *Provider {
	return &Provider{formats: map[string]*tracefs.Format{}, states: map[string]*probeData{}}
}

// Name returns "syscall".
func (*Provider) Name() string { return Name }

// ProbeNames returns the only probe names syscall has (provider.Namer),
// so that a description naming another (BEGIN) does not list the
// kernel's system calls.
func (*Provider) ProbeNames() []string { return []string{"entry", "return"} }

// load lists the system calls. Without tracefs the provider has no
// probes: tracing other providers must still work.
func (pv *Provider) load() {
	pv.once.Do(func() {
		pv.has = map[string][2]bool{}
		root, err := kernel.MountTracefs()
		if err != nil {
			return
		}
		evs, err := tracefs.Events(root, group)
		if err != nil {
			return
		}
		pv.root = root
		for _, ev := range evs {
			var fn string
			var i int
			switch {
			case strings.HasPrefix(ev, enterPrefix):
				fn, i = ev[len(enterPrefix):], 0
			case strings.HasPrefix(ev, exitPrefix):
				fn, i = ev[len(exitPrefix):], 1
			default:
				continue
			}
			h, seen := pv.has[fn]
			if !seen {
				pv.funcs = append(pv.funcs, fn)
			}
			h[i] = true
			pv.has[fn] = h
		}
	})
}

// Probes returns the entry and return probes of the system calls that
// match d: system calls in the order the kernel lists their tracepoints,
// entry before return.
func (pv *Provider) Probes(d provider.Desc) ([]*provider.Probe, error) {
	pv.load()
	pv.mu.Lock()
	defer pv.mu.Unlock()
	var out []*provider.Probe
	add := func(fn, name, event string, entry bool) {
		st := pv.states[event]
		if st == nil {
			nr, ok := sysnums()[fn]
			if !ok {
				nr = -1
			}
			st = &probeData{event: event, entry: entry, nr: nr, nrs32: numbers32(fn)}
			pv.states[event] = st
		}
		out = append(out, &provider.Probe{Provider: Name, Module: Module, Function: fn, Name: name, Data: st})
	}
	for _, fn := range pv.funcs {
		h := pv.has[fn]
		if h[0] && d.MatchesIn(Module, fn, Entry) {
			add(fn, Entry, enterPrefix+fn, true)
		}
		if h[1] && d.MatchesIn(Module, fn, Return) {
			add(fn, Return, exitPrefix+fn, false)
		}
	}
	// The registry lists every probe with an empty description to number
	// them; that is not a request to trace them all. With SetCompat, a
	// probe that 32-bit tasks can fire is wide however few were asked
	// for: its own tracepoint would not see them.
	if d != (provider.Desc{}) {
		many := len(out) > WideThreshold
		for _, p := range out {
			if st := p.Data.(*probeData); !st.frozen && st.nr >= 0 && (many || pv.compat && len(st.nrs32) > 0) {
				st.wide = true
			}
		}
	}
	return out, nil
}

// numbers32 returns the i386 numbers of the system call named fn (as its
// x86-64 tracepoints name it): its own, and those of its variants with a
// 32-bit time_t (clock_nanosleep_time32, 267, which 32-bit glibc calls
// for clock_nanosleep and sleep; timer_settime32), which the kernel's
// i386 table names after it.
func numbers32(fn string) []int32 {
	var nrs []int32
	for _, name := range []string{fn, fn + "_time32", fn + "32"} {
		if nr, ok := sysnums32()[name]; ok {
			nrs = append(nrs, nr)
		}
	}
	// From 424 on, i386 numbers are x86-64's (the table every
	// architecture shares), but for x86-64's own map_shadow_stack.
	if nr, ok := sysnums()[fn]; ok && nr >= commonNumbers && fn != "map_shadow_stack" {
		nrs = append(nrs, nr)
	}
	return nrs
}

// commonNumbers is the first system call number of the table all
// architectures share (pidfd_send_signal).
const commonNumbers = 424

// KnownNumber reports whether the provider knows the number of a system
// call, which a wide probe needs.
func KnownNumber(name string) bool {
	_, ok := sysnums()[name]
	return ok
}

// data returns the probe's state; with freeze, it also fixes the probe's
// mode, once a program is being built for it.
func (pv *Provider) data(p *provider.Probe, freeze bool) (*probeData, error) {
	st, ok := p.Data.(*probeData)
	if !ok {
		return nil, fmt.Errorf("syscall: probe %s was not made by this provider", p)
	}
	if freeze {
		pv.mu.Lock()
		st.frozen = true
		pv.mu.Unlock()
	}
	return st, nil
}

// Program says: a tracepoint program, or a raw tracepoint program for a
// wide probe.
func (pv *Provider) Program(p *provider.Probe) provider.ProgramKind {
	if st, err := pv.data(p, true); err == nil && st.wide {
		return provider.ProgramKind{Type: ebpf.RawTracepoint}
	}
	return provider.ProgramKind{Type: ebpf.TracePoint}
}

// format returns the (cached) format of a probe's tracepoint.
func (pv *Provider) format(p *provider.Probe, freeze bool) (*tracefs.Format, *probeData, error) {
	d, err := pv.data(p, freeze)
	if err != nil {
		return nil, nil, err
	}
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if f := pv.formats[d.event]; f != nil {
		return f, d, nil
	}
	if pv.root == "" {
		return nil, d, fmt.Errorf("syscall: tracefs is not available")
	}
	f, err := tracefs.ReadFormat(pv.root, group, d.event)
	if err != nil {
		return nil, d, err
	}
	pv.formats[d.event] = f
	return f, d, nil
}

// argFields returns the fields of a tracepoint record that are the
// probe's arguments: the system call's arguments on entry, ret on
// return. The record begins with __syscall_nr, which is not an argument.
func argFields(f *tracefs.Format) []tracefs.Field {
	fields := f.Fields
	if len(fields) > 0 && fields[0].Name == "__syscall_nr" {
		fields = fields[1:]
	}
	if len(fields) > 6 {
		fields = fields[:6]
	}
	return fields
}

// ArgTypes returns the C types of the probe's args[]: those of the system
// call's parameters on entry ("unsigned int", "const char *", ...), and
// "long" twice on return.
func (pv *Provider) ArgTypes(p *provider.Probe) ([]string, error) {
	f, d, err := pv.format(p, false)
	if err != nil {
		return nil, err
	}
	fields := argFields(f)
	if !d.entry {
		t := "long"
		if len(fields) == 1 {
			t = fields[0].Type
		}
		return []string{t, t}, nil
	}
	types := make([]string, len(fields))
	for i, fl := range fields {
		types[i] = fl.Type
	}
	return types, nil
}

// Prologue copies the arguments from the tracepoint record (R6) into the
// machine state and sets errno. A wide probe's prologue first skips the
// firings of other system calls and reads the arguments from the saved
// user registers.
func (pv *Provider) Prologue(p *provider.Probe, mstate int16) asm.Instructions {
	return pv.prologue(p, mstate, true)
}

// PrologueNoArgs is the Prologue of a probe whose clauses read no
// argument: an entry probe's is empty but for a wide probe's compat flag
// (Identify needs it), a return probe's sets errno only.
func (pv *Provider) PrologueNoArgs(p *provider.Probe, mstate int16) asm.Instructions {
	return pv.prologue(p, mstate, false)
}

func (pv *Provider) prologue(p *provider.Probe, mstate int16, args bool) asm.Instructions {
	fields, d := pv.fields(p)
	if d == nil {
		// Not our probe: never run its clauses.
		return asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.JEq.Imm(asm.R0, 0, provider.SkipLabel)}
	}
	arg := func(i int) int16 { return mstate + abi.MStateArgs + int16(8*i) }
	errno := mstate + abi.MStateErrno
	var insns asm.Instructions
	if !d.entry {
		if d.wide {
			// The raw sys_exit tracepoint gets (regs, ret). The
			// dispatcher ran the program for the system call's number
			// (Identify tells which probe fired, from the compat flag
			// left in R8).
			insns = append(insns, compatFlag(asm.R8, asm.R7, arg(0), pv.statusOffset())...)
			insns = append(insns, asm.LoadMem(asm.R0, asm.R6, 8, asm.DWord))
		} else {
			ret := tracefs.Field{Offset: 16, Size: 8, Signed: true}
			if len(fields) > 0 {
				ret = fields[0]
			}
			insns = append(insns, load(asm.R0, ret)...)
		}
		if args {
			insns = append(insns,
				asm.StoreMem(asm.R7, arg(0), asm.R0, asm.DWord),
				asm.StoreMem(asm.R7, arg(1), asm.R0, asm.DWord),
			)
			for i := 2; i < abi.MStateNArgs; i++ {
				insns = append(insns, provider.StoreImmDW(asm.R7, arg(i), 0))
			}
		}
		// The loader has set errno to 0.
		return append(insns,
			asm.JSGE.Imm(asm.R0, 0, "dt_syscall_errno_done"),
			asm.JSLT.Imm(asm.R0, -maxErrno, "dt_syscall_errno_done"),
			asm.Neg.Imm(asm.R0, 0),
			asm.StoreMem(asm.R7, errno, asm.R0, asm.DWord),
			// The label needs an instruction of the prologue to sit on.
			asm.Mov.Imm(asm.R0, 0).WithSymbol("dt_syscall_errno_done"),
		)
	}
	if d.wide {
		if !args {
			return compatFlag(asm.R8, asm.R7, arg(0), pv.statusOffset())
		}
		return pv.wideEntry(min(len(fields), 6), arg)
	}
	if !args {
		return nil
	}
	for i := 0; i < abi.MStateNArgs; i++ {
		if i < len(fields) {
			insns = append(insns, load(asm.R0, fields[i])...)
			insns = append(insns, asm.StoreMem(asm.R7, arg(i), asm.R0, asm.DWord))
		} else {
			insns = append(insns, provider.StoreImmDW(asm.R7, arg(i), 0))
		}
	}
	return insns
}

// wideEntry copies the n arguments of a system call from the saved user
// registers, the raw sys_enter tracepoint's first argument (its second is
// the number), to arg[0..n-1] and zeroes the rest: for a native task,
// from the block of argument registers read into arg[0..7], through
// registers R0-R5; for a compat task (R8 set by compatFlag), from the
// i386 argument registers, each 32 bits, zero-extended. The code depends
// on the number of arguments only: probes with as many share it.
func (pv *Provider) wideEntry(n int, arg func(int) int16) asm.Instructions {
	const compat, done = "dt_syscall_compat", "dt_syscall_args_done"
	insns := compatFlag(asm.R8, asm.R7, arg(0), pv.statusOffset())
	if n == 0 {
		// No register to read (getppid, fork, sync, ...).
		for i := 0; i < abi.MStateNArgs; i++ {
			insns = append(insns, provider.StoreImmDW(asm.R7, arg(i), 0))
		}
		return insns
	}
	insns = append(insns, asm.JNE.Imm(asm.R8, 0, compat))
	insns = append(insns, readRegs(asm.R7, arg(0), regsBlock, regsArgs, provider.SkipLabel)...)
	for i := 0; i < n; i++ {
		insns = append(insns, asm.LoadMem(asm.Register(i), asm.R7, arg(int(argSlots[i])), asm.DWord))
	}
	for i := 0; i < n; i++ {
		insns = append(insns, asm.StoreMem(asm.R7, arg(i), asm.Register(i), asm.DWord))
	}
	insns = append(insns, asm.Ja.Label(done))
	read := readRegs(asm.R7, arg(0), regsBlock32, regsArgs32, provider.SkipLabel)
	read[0] = read[0].WithSymbol(compat)
	insns = append(insns, read...)
	n5 := min(n, 5)
	for i := 0; i < n5; i++ {
		// A 32-bit move zero-extends.
		insns = append(insns, asm.LoadMem(asm.Register(i), asm.R7, arg(int(argSlots32[i])), asm.Word))
	}
	for i := 0; i < n5; i++ {
		insns = append(insns, asm.StoreMem(asm.R7, arg(i), asm.Register(i), asm.DWord))
	}
	if n > 5 {
		insns = append(insns, readRegs(asm.R7, arg(5), 8, regsBP, provider.SkipLabel)...)
		insns = append(insns,
			asm.LoadMem(asm.R0, asm.R7, arg(5), asm.Word),
			asm.StoreMem(asm.R7, arg(5), asm.R0, asm.DWord))
	}
	// The native path jumps here: it needs an instruction to sit on.
	insns = append(insns, asm.Mov.Imm(asm.R0, 0).WithSymbol(done))
	for i := n; i < abi.MStateNArgs; i++ {
		insns = append(insns, provider.StoreImmDW(asm.R7, arg(i), 0))
	}
	return insns
}

// fields returns the record fields the probe's prologue copies, and fixes
// the probe's mode. Without the format it falls back to the layout every
// syscall event has: u64 arguments from offset 16 (the verifier allows
// reading that far into any tracepoint record).
func (pv *Provider) fields(p *provider.Probe) ([]tracefs.Field, *probeData) {
	f, d, err := pv.format(p, true)
	if d == nil {
		return nil, nil
	}
	if err == nil {
		return argFields(f), d
	}
	n := 6
	if !d.entry {
		n = 1
	}
	var fields []tracefs.Field
	for i := 0; i < n; i++ {
		fields = append(fields, tracefs.Field{Offset: 16 + 8*i, Size: 8, Signed: !d.entry})
	}
	return fields, d
}

// readRegs copies size bytes at offset off of the saved user registers
// (the first argument of the raw syscall tracepoints) to base+dst (base:
// R7 for the machine state, RFP for the stack); if they cannot be read, it
// jumps to skip.
func readRegs(base asm.Register, dst int16, size int32, off int32, skip string) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Reg(asm.R1, base),
		asm.Add.Imm(asm.R1, int32(dst)),
		asm.Mov.Imm(asm.R2, size),
		asm.LoadMem(asm.R3, asm.R6, 0, asm.DWord),
		asm.Add.Imm(asm.R3, off),
		asm.FnProbeReadKernel.Call(),
		asm.JNE.Imm(asm.R0, 0, skip),
	}
}

// load reads a record field from the context into dst, widened to 64 bits
// as its signedness says.
func load(dst asm.Register, fl tracefs.Field) asm.Instructions {
	off := int16(fl.Offset)
	switch fl.Size {
	case 1, 2, 4:
		size := map[int]asm.Size{1: asm.Byte, 2: asm.Half, 4: asm.Word}[fl.Size]
		insns := asm.Instructions{asm.LoadMem(dst, asm.R6, off, size)}
		if fl.Signed {
			shift := int32(64 - 8*fl.Size)
			insns = append(insns, asm.LSh.Imm(dst, shift), asm.ArSh.Imm(dst, shift))
		}
		return insns
	default:
		return asm.Instructions{asm.LoadMem(dst, asm.R6, off, asm.DWord)}
	}
}
