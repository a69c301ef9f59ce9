// Package rawtp is dtrace-utils' rawtp provider: every kernel tracepoint
// as rawtp:GROUP::NAME, run as a raw tracepoint, its args[] the
// tracepoint's C arguments as the kernel passes them (no record), typed
// from the kernel's BTF (the btf_trace_NAME prototype; uint64_t where the
// kernel has no BTF).
package rawtp

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/internal/kfeature"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/fbt"
)

// Name is the provider's name.
const Name = "rawtp"

// tracepoint is one tracepoint: its tracefs group and name.
type tracepoint struct {
	group, name string
}

// Provider is the rawtp provider.
type Provider struct {
	once sync.Once
	tps  []tracepoint

	mu    sync.Mutex
	types map[tracepoint][]string // argument types, from BTF
}

// New returns the rawtp provider. It reads tracefs when first asked for
// probes.
func New() *Provider { return &Provider{types: map[tracepoint][]string{}} }

// Name returns "rawtp".
func (*Provider) Name() string { return Name }

// tpName is what a tracepoint's name looks like.
// Compiled when first used, not at package init: every start-up pays for init.
var tpName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9_]+$`) })

// MayName reports whether a probe name pattern may name a tracepoint: a
// glob, or a lower-case identifier other than fbt's and syscall's entry
// and return; so that BEGIN or tick-1s do not make dtrace read tracefs.
func (*Provider) MayName(pattern string) bool {
	if pattern == "" || provider.HasGlob(pattern) {
		return true
	}
	return tpName().MatchString(pattern) && pattern != "entry" && pattern != "return"
}

// load lists the tracepoints tracefs has, by group and name.
func (pv *Provider) load() {
	pv.once.Do(func() {
		root, err := kernel.MountTracefs()
		if err != nil {
			return
		}
		groups, err := os.ReadDir(filepath.Join(root, "events"))
		if err != nil {
			return
		}
		for _, g := range groups {
			if !g.IsDir() {
				continue
			}
			events, err := os.ReadDir(filepath.Join(root, "events", g.Name()))
			if err != nil {
				continue
			}
			for _, ev := range events {
				if ev.IsDir() {
					pv.tps = append(pv.tps, tracepoint{g.Name(), ev.Name()})
				}
			}
		}
		sort.Slice(pv.tps, func(i, j int) bool {
			if pv.tps[i].group != pv.tps[j].group {
				return pv.tps[i].group < pv.tps[j].group
			}
			return pv.tps[i].name < pv.tps[j].name
		})
	})
}

// Probes returns the tracepoints that match d.
func (pv *Provider) Probes(d provider.Desc) ([]*provider.Probe, error) {
	pv.load()
	var out []*provider.Probe
	for _, tp := range pv.tps {
		if d.MatchesIn(tp.group, "", tp.name) {
			out = append(out, &provider.Probe{Provider: Name, Module: tp.group, Name: tp.name, Data: tp})
		}
	}
	return out, nil
}

func (pv *Provider) tracepoint(p *provider.Probe) (tracepoint, error) {
	tp, ok := p.Data.(tracepoint)
	if !ok || p.Owner != nil && p.Owner != provider.Provider(pv) {
		return tp, fmt.Errorf("rawtp: probe %s was not made by this provider", p)
	}
	return tp, nil
}

// Program says: a raw tracepoint program.
func (*Provider) Program(*provider.Probe) provider.ProgramKind {
	return provider.ProgramKind{Type: ebpf.RawTracepoint}
}

// ArgTypes returns the C types of the tracepoint's arguments.
func (pv *Provider) ArgTypes(p *provider.Probe) ([]string, error) {
	tp, err := pv.tracepoint(p)
	if err != nil {
		return nil, err
	}
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if t, ok := pv.types[tp]; ok {
		return t, nil
	}
	t, err := argTypes(tp.name)
	if err != nil {
		return nil, err
	}
	pv.types[tp] = t
	return t, nil
}

// XArgTypes keeps every argument's native type.
func (pv *Provider) XArgTypes(p *provider.Probe) ([]string, error) {
	t, err := pv.ArgTypes(p)
	if err != nil {
		return nil, err
	}
	return make([]string, len(t)), nil
}

// argTypes reads the prototype of a tracepoint's raw arguments from the
// kernel's BTF: btf_trace_NAME is a pointer to a function whose first
// parameter is the tracepoint's data pointer. Without BTF every argument
// is a uint64_t and their number unknown: arg0..arg9 all copied.
func argTypes(name string) ([]string, error) {
	spec, err := kfeature.KernelSpec()
	if err != nil {
		out := make([]string, abi.MStateNArgs)
		for i := range out {
			out[i] = "uint64_t"
		}
		return out, nil
	}
	var td *btf.Typedef
	if err := spec.TypeByName("btf_trace_"+name, &td); err != nil {
		return nil, fmt.Errorf("rawtp: no prototype for tracepoint %s in the kernel's BTF: %w", name, err)
	}
	ptr, ok := btf.UnderlyingType(td).(*btf.Pointer)
	if !ok {
		return nil, fmt.Errorf("rawtp: btf_trace_%s is not a function pointer", name)
	}
	fp, ok := btf.UnderlyingType(ptr.Target).(*btf.FuncProto)
	if !ok || len(fp.Params) == 0 {
		return nil, fmt.Errorf("rawtp: btf_trace_%s is not a function pointer", name)
	}
	out := []string{}
	for _, prm := range fp.Params[1:] {
		out = append(out, fbt.CType(prm.Type))
	}
	return out, nil
}

// Prologue copies the tracepoint's arguments (at most ten) into args[].
func (pv *Provider) Prologue(p *provider.Probe, mstate int16) asm.Instructions {
	t, err := pv.ArgTypes(p)
	if err != nil {
		return asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.JEq.Imm(asm.R0, 0, provider.SkipLabel)}
	}
	return provider.CopyArgs(0, min(len(t), abi.MStateNArgs), mstate)
}

// Attach links the program to the raw tracepoint.
func (pv *Provider) Attach(p *provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	tp, err := pv.tracepoint(p)
	if err != nil {
		return nil, err
	}
	return provider.AttachRawTracepoint(p, tp.group, tp.name, prog)
}
