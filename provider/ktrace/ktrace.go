// Package ktrace builds providers of DTrace's stable kernel probes (proc,
// sched, io) on kernel tracepoints. A provider is a table of probe specs:
// each names the tracepoints it runs on (raw tracepoints, whose context is
// the tracepoint's C arguments, or tracefs events, whose context is the
// event record), the C types of its args[] with the types a D program sees
// through the D library's translators, and a prologue that fills args[]
// from the context and skips firings that are not the probe's.
//
// A probe whose tracepoints this kernel lacks is not listed (bare
// tracepoints, which tracefs does not show, are assumed to exist; attaching
// to a missing one fails with the kernel's error).
package ktrace

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/internal/kfeature"
	"github.com/dtrace-go/dtrace/provider"
)

// Kind is the kind of tracepoint a probe runs on.
type Kind int

const (
	// Raw tracepoints: the context is the tracepoint's arguments as an
	// array of u64 (struct bpf_raw_tracepoint_args). Bare tracepoints,
	// which have no tracefs event, are raw tracepoints too.
	Raw Kind = iota
	// Event tracepoints (tracefs events): the context is the event's
	// record as events/GROUP/EVENT/format lays it out.
	Event
	// Kprobes on kernel functions (Source.Name, or the first function
	// available_filter_functions lists whose name starts with it and a
	// '.': the compiler's copies, finish_task_switch.isra.0): the
	// context is the registers.
	Kprobe
)

// Source names one tracepoint. Raw tracepoints are attached by Name
// alone; Group is their tracefs group, where the provider looks for them.
// A bare tracepoint (Bare) has no tracefs event: the provider assumes it
// exists, and attaching says so if it does not (looking for its
// btf_trace_NAME type would read the kernel's BTF for every program that
// touches the provider, which dtrace's start-up cannot afford).
type Source struct {
	Group, Name string
	Bare        bool
	// Cookie is the BPF cookie of the attachment (Event kind only),
	// which the prologue reads with Emitter.Cookie to tell the probe's
	// tracepoints apart; 0 for none.
	Cookie uint64
}

// Sources returns the tracepoints group:name for each of names.
func Sources(group string, names ...string) []Source {
	out := make([]Source, 0, len(names))
	for _, n := range names {
		out = append(out, Source{Group: group, Name: n})
	}
	return out
}

// Spec describes one probe.
type Spec struct {
	Module, Function, Name string
	Kind                   Kind
	// Sources are the tracepoints the probe's program runs on; they must
	// share the context layout the prologue reads. Those the kernel
	// lacks are left out; a probe with none is not listed.
	Sources []Source
	// Args are the C types of args[] as the probe passes them
	// ("struct task_struct *", "int").
	Args []string
	// XArgs are the types a D program sees ("psinfo_t *"), translated
	// from Args by the D library's translators; "" keeps the native
	// type. nil: all native.
	XArgs []string
	// Prologue emits the code that fills arg[] (zeroed before it runs)
	// and skips firings that are not the probe's. nil: no arguments.
	Prologue func(e *Emitter) error
	// Maps returns the maps the prologue references (provider.Mapper);
	// nil: none. Called when the probe is enabled.
	Maps func() []provider.HashMap
	// Alt is another way to run the probe (its Kind, Sources and
	// Prologue; the rest is the spec's) where the kernel lacks the
	// spec's bare tracepoints, checked in the kernel's BTF when the
	// probe is first enabled; nil: none.
	Alt *Spec
}

// Provider is a provider made of specs.
type Provider struct {
	name     string
	specs    []Spec
	internal bool

	once    sync.Once
	sources [][]Source // per spec, the tracepoints that exist

	mu       sync.Mutex
	resolved map[int]way // per spec enabled, the way it runs
}

// way is how an enabled probe runs: the spec (or one of its
// alternatives) and the sources that exist.
type way struct {
	spec    *Spec
	sources []Source
	err     error
}

// New returns the provider name offering the probes of specs, listed in
// the order given.
func New(name string, specs []Spec) *Provider {
	return &Provider{name: name, specs: specs}
}

// NewInternal returns a provider for the library's own use
// (provider.Internal): its probes match only a description that names it.
func NewInternal(name string, specs []Spec) *Provider {
	return &Provider{name: name, specs: specs, internal: true}
}

// Name returns the provider's name.
func (pv *Provider) Name() string { return pv.name }

// Internal reports whether the provider is for the library's own use.
func (pv *Provider) Internal() bool { return pv.internal }

// ProbeNames returns the names of the provider's probes (provider.Namer),
// so that a description naming none of them (BEGIN) does not look for
// the provider's tracepoints.
func (pv *Provider) ProbeNames() []string {
	var names []string
	seen := map[string]bool{}
	for _, s := range pv.specs {
		if !seen[s.Name] {
			seen[s.Name] = true
			names = append(names, s.Name)
		}
	}
	return names
}

// load finds which tracepoints exist.
func (pv *Provider) load() {
	pv.once.Do(func() {
		pv.sources = make([][]Source, len(pv.specs))
		root, _ := kernel.MountTracefs()
		for i, s := range pv.specs {
			for _, src := range s.Sources {
				if exists(src, root) {
					pv.sources[i] = append(pv.sources[i], src)
				}
			}
		}
	})
}

// exists reports whether the kernel has the tracepoint: whether tracefs
// has its event directory. A bare tracepoint is assumed to exist.
func exists(src Source, root string) bool {
	if src.Bare {
		return true
	}
	if root == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(root, "events", src.Group, src.Name))
	return err == nil
}

// Probes returns the probes that match d and whose tracepoints exist.
func (pv *Provider) Probes(d provider.Desc) ([]*provider.Probe, error) {
	pv.load()
	var out []*provider.Probe
	for i := range pv.specs {
		s := &pv.specs[i]
		if len(pv.sources[i]) == 0 || !d.MatchesIn(s.Module, s.Function, s.Name) {
			continue
		}
		out = append(out, &provider.Probe{Provider: pv.name, Module: s.Module, Function: s.Function, Name: s.Name, Data: i})
	}
	return out, nil
}

// spec returns the spec of a probe this provider made.
func (pv *Provider) spec(p *provider.Probe) (*Spec, []Source, error) {
	i, ok := p.Data.(int)
	if !ok || p.Owner != nil && p.Owner != provider.Provider(pv) || i < 0 || i >= len(pv.specs) {
		return nil, nil, fmt.Errorf("%s: probe %s was not made by this provider", pv.name, p)
	}
	pv.load()
	w := pv.resolve(i)
	if w.err != nil {
		return nil, nil, w.err
	}
	return w.spec, w.sources, nil
}

// resolve finds how probe i runs on this kernel: its spec, unless that
// runs on bare tracepoints the kernel's BTF does not know, then the
// first alternative whose sources exist.
func (pv *Provider) resolve(i int) way {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if w, ok := pv.resolved[i]; ok {
		return w
	}
	if pv.resolved == nil {
		pv.resolved = map[int]way{}
	}
	w := way{spec: &pv.specs[i], sources: pv.sources[i]}
	if s := &pv.specs[i]; s.Alt != nil && !bareExist(s.Sources) {
		w.sources = nil
		for alt := s.Alt; alt != nil; alt = alt.Alt {
			srcs := existing(alt.Kind, alt.Sources)
			if len(srcs) == 0 {
				continue
			}
			merged := *s
			merged.Kind, merged.Sources, merged.Prologue, merged.Alt = alt.Kind, srcs, alt.Prologue, nil
			w = way{spec: &merged, sources: srcs}
			break
		}
	}
	pv.resolved[i] = w
	return w
}

// bareExist reports whether the kernel's BTF has the bare tracepoints
// among srcs (btf_trace_NAME); without BTF they are assumed to exist.
func bareExist(srcs []Source) bool {
	spec, err := kfeature.KernelSpec()
	if err != nil {
		return true
	}
	for _, src := range srcs {
		if !src.Bare {
			continue
		}
		var td *btf.Typedef
		if spec.TypeByName("btf_trace_"+src.Name, &td) != nil {
			return false
		}
	}
	return true
}

// existing returns the sources of an alternative that the kernel has.
func existing(kind Kind, srcs []Source) []Source {
	var out []Source
	if kind == Kprobe {
		for _, src := range srcs {
			if fn := kernelFunction(src.Name); fn != "" {
				src.Name = fn
				out = append(out, src)
			}
		}
		return out
	}
	root, _ := kernel.MountTracefs()
	for _, src := range srcs {
		if src.Bare && bareExist([]Source{src}) || !src.Bare && exists(src, root) {
			out = append(out, src)
		}
	}
	return out
}

// kernelFunction returns the traceable function called name, or the
// first one whose name is name and a suffix the compiler adds (".isra.0"),
// or "" where the kernel has neither (no kprobes, no such function).
func kernelFunction(name string) string {
	root, err := kernel.MountTracefs()
	if err != nil {
		return ""
	}
	f, err := os.Open(filepath.Join(root, "available_filter_functions"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	found := ""
	for sc.Scan() {
		fn, _, _ := strings.Cut(sc.Text(), " ")
		if fn == name {
			return fn
		}
		if found == "" && strings.HasPrefix(fn, name+".") {
			found = fn
		}
	}
	return found
}

// Program says: a raw tracepoint or a tracepoint program.
func (pv *Provider) Program(p *provider.Probe) provider.ProgramKind {
	if s, _, err := pv.spec(p); err == nil && s.Kind == Event {
		return provider.ProgramKind{Type: ebpf.TracePoint}
	} else if err == nil && s.Kind == Kprobe {
		return provider.ProgramKind{Type: ebpf.Kprobe}
	}
	return provider.ProgramKind{Type: ebpf.RawTracepoint}
}

// Maps returns the maps the probe's prologue uses.
func (pv *Provider) Maps(p *provider.Probe) []provider.HashMap {
	s, _, err := pv.spec(p)
	if err != nil || s.Maps == nil {
		return nil
	}
	return s.Maps()
}

// ArgTypes returns the native C types of the probe's args[]: none (not
// unknown) for a probe without arguments, so that args[0] is out of range.
func (pv *Provider) ArgTypes(p *provider.Probe) ([]string, error) {
	s, _, err := pv.spec(p)
	if err != nil {
		return nil, err
	}
	if s.Args == nil {
		return []string{}, nil
	}
	return s.Args, nil
}

// XArgTypes returns the types a D program sees for the probe's args[]
// ("" where the native type stays), or nil when none is translated.
func (pv *Provider) XArgTypes(p *provider.Probe) ([]string, error) {
	s, _, err := pv.spec(p)
	if err != nil {
		return nil, err
	}
	return s.XArgs, nil
}

// Prologue zeroes arg[] and runs the spec's prologue. A probe whose
// prologue cannot be built (a kernel type it reads is missing) never runs
// its clauses.
func (pv *Provider) Prologue(p *provider.Probe, mstate int16) asm.Instructions {
	never := asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.JEq.Imm(asm.R0, 0, provider.SkipLabel)}
	s, _, err := pv.spec(p)
	if err != nil {
		return never
	}
	e := &Emitter{mstate: mstate, prefix: "dt_" + pv.name + "_"}
	for i := 0; i < abi.MStateNArgs; i++ {
		e.Emit(provider.StoreImmDW(asm.R7, e.Arg(i), 0))
	}
	if s.Prologue != nil {
		if err := s.Prologue(e); err != nil {
			return never
		}
	}
	// Labels need an instruction to sit on.
	return append(e.insns, asm.Mov.Imm(asm.R0, 0).WithSymbol(e.prefix+"end"))
}

// Emitter collects a prologue's instructions. On entry R6 holds the
// context and R7 this CPU's scratch area; a prologue may use R0-R5 and
// R8-R9.
type Emitter struct {
	insns  asm.Instructions
	mstate int16
	prefix string
	labels int
}

// Emit appends instructions.
func (e *Emitter) Emit(insns ...asm.Instruction) { e.insns = append(e.insns, insns...) }

// Arg returns the offset from R7 of arg[i] in the machine state.
func (e *Emitter) Arg(i int) int16 { return e.mstate + abi.MStateArgs + int16(8*i) }

// Label returns a label unique in the program.
func (e *Emitter) Label() string {
	e.labels++
	return fmt.Sprintf("%sl%d", e.prefix, e.labels)
}

// Mark puts label l on the next instruction.
func (e *Emitter) Mark(l string) { e.Emit(asm.Mov.Imm(asm.R0, 0).WithSymbol(l)) }

// Ctx loads argument i of a raw tracepoint into dst.
func (e *Emitter) Ctx(dst asm.Register, i int) {
	e.Emit(asm.LoadMem(dst, asm.R6, int16(8*i), asm.DWord))
}

// Field loads a field of an event record into dst, widened to 64 bits as
// signed says.
func (e *Emitter) Field(dst asm.Register, off int16, size int, signed bool) {
	sz := map[int]asm.Size{1: asm.Byte, 2: asm.Half, 4: asm.Word, 8: asm.DWord}[size]
	e.Emit(asm.LoadMem(dst, asm.R6, off, sz))
	if signed && size < 8 {
		shift := int32(64 - 8*size)
		e.Emit(asm.LSh.Imm(dst, shift), asm.ArSh.Imm(dst, shift))
	}
}

// SetArg stores src into arg[i].
func (e *Emitter) SetArg(i int, src asm.Register) {
	e.Emit(asm.StoreMem(asm.R7, e.Arg(i), src, asm.DWord))
}

// CtxArg copies argument j of a raw tracepoint to arg[i].
func (e *Emitter) CtxArg(i, j int) {
	e.Ctx(asm.R0, j)
	e.SetArg(i, asm.R0)
}

// Cookie loads the attachment's BPF cookie (Source.Cookie) into R0; it
// clobbers R1-R5.
func (e *Emitter) Cookie() {
	e.Emit(asm.Mov.Reg(asm.R1, asm.R6), asm.FnGetAttachCookie.Call())
}

// loadSlot is the stack slot Load reads through: below the 8 bytes the
// loader's scratch lookup and share lookup use.
const loadSlot = -16

// Load sets dst to the size bytes (at most 8) at kernel address src+off,
// zero-extended, or 0 if they cannot be read. It clobbers R0-R5 (dst may
// be one of them) and keeps R6-R9 other than dst.
func (e *Emitter) Load(dst, src asm.Register, off int32, size int32) {
	e.Emit(
		provider.StoreImmDW(asm.RFP, loadSlot, 0),
		asm.Mov.Reg(asm.R3, src),
		asm.Add.Imm(asm.R3, off),
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, loadSlot),
		asm.Mov.Imm(asm.R2, size),
		asm.FnProbeReadKernel.Call(),
		asm.LoadMem(dst, asm.RFP, loadSlot, asm.DWord),
	)
}

// Stash returns the offset from R7 of the provider's u64 slot i (0 or 1)
// in the machine state, which keeps its value from one firing to the
// next on this CPU (abi.MStateStash).
func (e *Emitter) Stash(i int) int16 { return e.mstate + abi.MStateStash + int16(8*i) }

// Skip ends the firing: the probe's clauses do not run.
func (e *Emitter) Skip() asm.Instruction { return asm.Ja.Label(provider.SkipLabel) }

// Read sets arg[i] to the size bytes (at most 8) at kernel address
// src+off, zero-extended; arg[i] stays 0 if they cannot be read. It
// clobbers R0-R5.
func (e *Emitter) Read(i int, src asm.Register, off int32, size int32) {
	ok := e.Label()
	e.Emit(
		asm.Mov.Reg(asm.R3, src),
		asm.Add.Imm(asm.R3, off),
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.Add.Imm(asm.R1, int32(e.Arg(i))),
		asm.Mov.Imm(asm.R2, size),
		asm.FnProbeReadKernel.Call(),
		asm.JEq.Imm(asm.R0, 0, ok),
		provider.StoreImmDW(asm.R7, e.Arg(i), 0),
	)
	e.Mark(ok)
}

// Offsets returns the byte offsets of kernel struct members, each named
// as struct.member ("task_struct.signal", "k_sigaction.sa.sa_handler"),
// from the kernel's BTF; the first that is missing is the error.
func Offsets(members ...string) ([]int32, error) {
	offs := make([]int32, len(members))
	for i, m := range members {
		st, member := cut(m)
		off, _, err := Offset(st, member)
		if err != nil {
			return nil, err
		}
		offs[i] = off
	}
	return offs, nil
}

// Offset returns the byte offset and size of a member of a kernel struct,
// from the kernel's BTF. Nested members are named with dots ("sa.sa_handler").
func Offset(structName, member string) (off, size int32, err error) {
	spec, err := kfeature.KernelSpec()
	if err != nil {
		return 0, 0, fmt.Errorf("struct %s: %w", structName, err)
	}
	var st *btf.Struct
	if err := spec.TypeByName(structName, &st); err != nil {
		return 0, 0, fmt.Errorf("struct %s: %w", structName, err)
	}
	var t btf.Type = st
	var total uint32
	name := member
	for name != "" {
		var part string
		part, name = cut(name)
		m, base, ok := findMember(t, part)
		if !ok {
			return 0, 0, fmt.Errorf("struct %s has no member %s", structName, member)
		}
		total += base + m.Offset.Bytes()
		t = m.Type
	}
	sz, err := btf.Sizeof(t)
	if err != nil {
		return 0, 0, err
	}
	return int32(total), int32(sz), nil
}

func cut(s string) (string, string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

// findMember finds a member by name in a struct or union, looking into
// anonymous members; base is the offset of the anonymous member holding
// it.
func findMember(t btf.Type, name string) (btf.Member, uint32, bool) {
	var members []btf.Member
	switch u := btf.UnderlyingType(t).(type) {
	case *btf.Struct:
		members = u.Members
	case *btf.Union:
		members = u.Members
	default:
		return btf.Member{}, 0, false
	}
	for _, m := range members {
		if m.Name == name {
			return m, 0, true
		}
	}
	for _, m := range members {
		if m.Name == "" {
			if in, base, ok := findMember(m.Type, name); ok {
				return in, base + m.Offset.Bytes(), true
			}
		}
	}
	return btf.Member{}, 0, false
}

// ErrNoTracepoint is returned by Attach when none of a probe's
// tracepoints exists.
var ErrNoTracepoint = errors.New("the kernel has none of the probe's tracepoints")
