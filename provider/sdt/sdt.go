// Package sdt is the sdt provider of DTrace for Linux: every kernel
// tracepoint that tracefs lists, as sdt:GROUP::EVENT (module the event's
// group, no function, name the event), except the groups other providers
// or other tools own (syscalls, kprobes, uprobes).
//
// args[] are the fields of the event's record after the common ones, in
// record order, typed as the event's format file declares them. A scalar
// field is its value, widened as its signedness says; an array field
// ("char oldcomm[16]") and a dynamic one ("__data_loc char[] name") are the
// address of their bytes in the record, typed as a pointer to the element
// ("char *"), so that stringof(args[1]) and copyin() read them.
package sdt

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/internal/tracefs"
	"github.com/dtrace-go/dtrace/provider"
)

// Name is the provider's name.
const Name = "sdt"

// excluded are the tracefs groups the provider does not offer: system
// calls are the syscall provider's, kprobes and uprobes groups are
// dynamic events other tools create.
// So are the groups of dtrace's own trace events (provider.TraceEvent).
var excluded = map[string]bool{"syscalls": true, "kprobes": true, "uprobes": true, "ftrace": true}

// Provider is the sdt provider.
type Provider struct {
	once   sync.Once
	root   string
	events []event

	mu      sync.Mutex
	formats map[event]*tracefs.Format
}

// event is one tracepoint, group:name.
type event struct{ group, name string }

// New returns the sdt provider.
func New() *Provider { return &Provider{formats: map[event]*tracefs.Format{}} }

// Name returns "sdt".
func (*Provider) Name() string { return Name }

// reserved are the probe names of the dtrace provider, which no kernel's
// tracepoint has: sdt offers no probe of these names, so that a program
// naming BEGIN alone does not read the kernel's list of events.
var reserved = map[string]bool{"BEGIN": true, "END": true, "ERROR": true}

// MayName reports whether a probe of the provider may have a name
// pattern matches (provider.NameFilter): anything but the dtrace
// provider's names.
func (*Provider) MayName(pattern string) bool { return !reserved[pattern] }

// load reads the list of events. Without tracefs the provider has no
// probes.
func (pv *Provider) load() {
	pv.once.Do(func() {
		root, err := kernel.MountTracefs()
		if err != nil {
			return
		}
		data, err := os.ReadFile(filepath.Join(root, "available_events"))
		if err != nil {
			return
		}
		pv.root = root
		for _, ev := range strings.Split(string(data), "\n") {
			g, n, ok := strings.Cut(ev, ":")
			if !ok || g == "" || n == "" || excluded[g] || reserved[n] || strings.HasPrefix(g, provider.TraceEventGroupPrefix) {
				continue
			}
			pv.events = append(pv.events, event{g, n})
		}
	})
}

// Probes returns the probes of the events that match d, in the order the
// kernel lists them.
func (pv *Provider) Probes(d provider.Desc) ([]*provider.Probe, error) {
	pv.load()
	var out []*provider.Probe
	for _, ev := range pv.events {
		if d.MatchesIn(ev.group, "", ev.name) {
			out = append(out, &provider.Probe{Provider: Name, Module: ev.group, Name: ev.name, Data: ev})
		}
	}
	return out, nil
}

// format returns the (cached) format of a probe's event.
func (pv *Provider) format(p *provider.Probe) (event, *tracefs.Format, error) {
	ev, ok := p.Data.(event)
	if !ok {
		return ev, nil, fmt.Errorf("sdt: probe %s was not made by this provider", p)
	}
	pv.load()
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if f := pv.formats[ev]; f != nil {
		return ev, f, nil
	}
	if pv.root == "" {
		return ev, nil, fmt.Errorf("sdt: tracefs is not available")
	}
	f, err := tracefs.ReadFormat(pv.root, ev.group, ev.name)
	if err != nil {
		return ev, nil, err
	}
	pv.formats[ev] = f
	return ev, f, nil
}

// Program says: a tracepoint program.
func (*Provider) Program(*provider.Probe) provider.ProgramKind {
	return provider.ProgramKind{Type: ebpf.TracePoint}
}

// argFields returns the fields that are arguments: at most abi.MStateNArgs.
func argFields(f *tracefs.Format) []tracefs.Field {
	if len(f.Fields) > abi.MStateNArgs {
		return f.Fields[:abi.MStateNArgs]
	}
	return f.Fields
}

// byAddress tells fields passed as the address of their bytes: arrays,
// dynamic arrays and anything that is not a scalar.
func byAddress(fl tracefs.Field) bool {
	return strings.HasSuffix(fl.Type, "]") || strings.HasPrefix(fl.Type, "__data_loc ") ||
		fl.Size != 1 && fl.Size != 2 && fl.Size != 4 && fl.Size != 8
}

// dataLoc tells a dynamic array, whose field holds its offset in the
// record (low 16 bits) and its length (high 16 bits).
func dataLoc(fl tracefs.Field) bool { return strings.HasPrefix(fl.Type, "__data_loc ") }

// argType is the C type of a field as an argument.
func argType(fl tracefs.Field) string {
	if !byAddress(fl) {
		return fl.Type
	}
	t := strings.TrimPrefix(fl.Type, "__data_loc ")
	if i := strings.IndexByte(t, '['); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	return t + " *"
}

// ArgTypes returns the types of the event's fields.
func (pv *Provider) ArgTypes(p *provider.Probe) ([]string, error) {
	_, f, err := pv.format(p)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, fl := range argFields(f) {
		out = append(out, argType(fl))
	}
	return out, nil
}

// Prologue copies the fields into arg[]: scalars by value, the others by
// their address in the record.
func (pv *Provider) Prologue(p *provider.Probe, mstate int16) asm.Instructions {
	_, f, err := pv.format(p)
	if err != nil {
		return asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.JEq.Imm(asm.R0, 0, provider.SkipLabel)}
	}
	fields := argFields(f)
	var insns asm.Instructions
	for i := 0; i < abi.MStateNArgs; i++ {
		dst := mstate + abi.MStateArgs + int16(8*i)
		if i >= len(fields) {
			insns = append(insns, provider.StoreImmDW(asm.R7, dst, 0))
			continue
		}
		fl := fields[i]
		off := int16(fl.Offset)
		switch {
		case dataLoc(fl):
			insns = append(insns,
				asm.LoadMem(asm.R1, asm.R6, off, asm.Word),
				asm.And.Imm(asm.R1, 0xffff),
				asm.Mov.Reg(asm.R0, asm.R6),
				asm.Add.Reg(asm.R0, asm.R1))
		case byAddress(fl):
			insns = append(insns, asm.Mov.Reg(asm.R0, asm.R6), asm.Add.Imm(asm.R0, int32(off)))
		default:
			size := map[int]asm.Size{1: asm.Byte, 2: asm.Half, 4: asm.Word, 8: asm.DWord}[fl.Size]
			insns = append(insns, asm.LoadMem(asm.R0, asm.R6, off, size))
			if fl.Signed && fl.Size < 8 {
				shift := int32(64 - 8*fl.Size)
				insns = append(insns, asm.LSh.Imm(asm.R0, shift), asm.ArSh.Imm(asm.R0, shift))
			}
		}
		insns = append(insns, asm.StoreMem(asm.R7, dst, asm.R0, asm.DWord))
	}
	return insns
}
