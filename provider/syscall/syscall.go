package syscall

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/internal/tracefs"
	"github.com/dtrace-go/dtrace/provider"
)

// MStateErrno is the machine-state offset of the u64 errno that the
// prologue fills and the errno built-in variable reads.
const MStateErrno = 120

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

// Provider is the syscall provider. It reads the list of system calls from
// tracefs once, on first use.
type Provider struct {
	once  sync.Once
	root  string
	funcs []string // system calls in available_events order
	has   map[string][2]bool

	mu      sync.Mutex
	formats map[string]*tracefs.Format // by event name
}

// probeData is what a probe made by this provider carries.
type probeData struct {
	event string // the tracepoint, sys_enter_NAME or sys_exit_NAME
	entry bool
}

// New returns the syscall provider.
func New() *Provider { return &Provider{formats: map[string]*tracefs.Format{}} }

// Name returns "syscall".
func (*Provider) Name() string { return Name }

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
	var out []*provider.Probe
	for _, fn := range pv.funcs {
		h := pv.has[fn]
		if h[0] && d.MatchesIn(Module, fn, Entry) {
			out = append(out, &provider.Probe{Provider: Name, Module: Module, Function: fn, Name: Entry,
				Data: probeData{event: enterPrefix + fn, entry: true}})
		}
		if h[1] && d.MatchesIn(Module, fn, Return) {
			out = append(out, &provider.Probe{Provider: Name, Module: Module, Function: fn, Name: Return,
				Data: probeData{event: exitPrefix + fn}})
		}
	}
	return out, nil
}

// Program says: a tracepoint program.
func (*Provider) Program(*provider.Probe) provider.ProgramKind {
	return provider.ProgramKind{Type: ebpf.TracePoint}
}

// format returns the (cached) format of a probe's tracepoint.
func (pv *Provider) format(p *provider.Probe) (*tracefs.Format, probeData, error) {
	d, ok := p.Data.(probeData)
	if !ok {
		return nil, d, fmt.Errorf("syscall: probe %s was not made by this provider", p)
	}
	pv.load()
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
	f, d, err := pv.format(p)
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
// machine state and sets errno.
func (pv *Provider) Prologue(p *provider.Probe, mstate int16) asm.Instructions {
	var fields []tracefs.Field
	f, d, err := pv.format(p)
	if err == nil {
		fields = argFields(f)
	} else {
		// Without the format, fall back to the layout every syscall
		// event has: u64 arguments from offset 16 (the verifier allows
		// reading that far into any tracepoint record).
		n := 6
		if !d.entry {
			n = 1
		}
		for i := 0; i < n; i++ {
			fields = append(fields, tracefs.Field{Offset: 16 + 8*i, Size: 8, Signed: !d.entry})
		}
	}
	arg := func(i int) int16 { return mstate + provider.MStateArgs + int16(8*i) }
	errno := mstate + MStateErrno
	var insns asm.Instructions
	if !d.entry {
		ret := tracefs.Field{Offset: 16, Size: 8, Signed: true}
		if len(fields) > 0 {
			ret = fields[0]
		}
		insns = append(insns, load(asm.R0, ret)...)
		insns = append(insns,
			asm.StoreMem(asm.R7, arg(0), asm.R0, asm.DWord),
			asm.StoreMem(asm.R7, arg(1), asm.R0, asm.DWord),
		)
		for i := 2; i < provider.NumArgs; i++ {
			insns = append(insns, provider.StoreImmDW(asm.R7, arg(i), 0))
		}
		return append(insns,
			provider.StoreImmDW(asm.R7, errno, 0),
			asm.JSGE.Imm(asm.R0, 0, "dt_syscall_errno_done"),
			asm.JSLT.Imm(asm.R0, -maxErrno, "dt_syscall_errno_done"),
			asm.Neg.Imm(asm.R0, 0),
			asm.StoreMem(asm.R7, errno, asm.R0, asm.DWord),
			// The label needs an instruction of the prologue to sit on.
			asm.Mov.Imm(asm.R0, 0).WithSymbol("dt_syscall_errno_done"),
		)
	}
	for i := 0; i < provider.NumArgs; i++ {
		if i < len(fields) {
			insns = append(insns, load(asm.R0, fields[i])...)
			insns = append(insns, asm.StoreMem(asm.R7, arg(i), asm.R0, asm.DWord))
		} else {
			insns = append(insns, provider.StoreImmDW(asm.R7, arg(i), 0))
		}
	}
	return append(insns, provider.StoreImmDW(asm.R7, errno, 0))
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
