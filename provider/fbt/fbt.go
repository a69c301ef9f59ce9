package fbt

import (
	"fmt"
	"os"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/internal/kfeature"
	"github.com/dtrace-go/dtrace/provider"
)

// Name is the provider's name.
const Name = "fbt"

// Kernel is the module name of core kernel functions.
const Kernel = "vmlinux"

// maxFentryArgs is the most arguments a function may have for its probes
// to run on fentry/fexit: every kernel from 5.5 takes six, more only on
// some architectures and newer kernels.
const maxFentryArgs = 6

// noFentry are functions the verifier refuses to let fentry/fexit attach
// to (the trampoline itself calls them, or they never return); their
// probes run on kprobes.
var noFentry = map[string]bool{
	"migrate_disable": true, "migrate_enable": true, "rcu_read_unlock_strict": true,
	"preempt_count_add": true, "preempt_count_sub": true, "__rcu_read_lock": true,
	"__rcu_read_unlock": true, "do_exit": true, "do_group_exit": true,
	"kthread_complete_and_exit": true, "kthread_exit": true, "make_task_dead": true,
	"__x64_sys_exit": true, "__x64_sys_exit_group": true, "__ia32_sys_exit": true,
	"__ia32_sys_exit_group": true, "__arm64_sys_exit": true, "__arm64_sys_exit_group": true,
}

// function is one traceable kernel function.
type function struct {
	mod, name string
}

// probeData is what a probe made by this provider carries.
type probeData struct {
	fn  int // index into Provider.funcs
	ret bool
}

// info is what BTF says about a function, found when first needed.
type info struct {
	// typed: BTF has a prototype; args and ret are then valid.
	typed bool
	args  []string // C types of the parameters
	ret   string   // C type of the return value, "" for void
	// retSize and retSigned say how to widen the return value.
	retSize   int
	retSigned bool
	// fentry: the probes may run on fentry/fexit, where the kernel has
	// it (mode).
	fentry bool
}

// Provider is the fbt provider.
type Provider struct {
	once   sync.Once
	funcs  []function
	byName map[string][]int // function name -> indexes into funcs
	reason string           // why there are no probes

	// kprobeOnly forces one kprobe per probe (DTRACE_FBT=kprobe);
	// noMulti forbids kprobe.multi (DTRACE_FBT=fentry).
	kprobeOnly, noMulti bool

	// wide holds the probes (probeData) a description matched with
	// more than WideThreshold others: they share programs (ShareKey).
	wide map[probeData]bool

	mu    sync.Mutex
	infos map[int]*info
	specs map[string]*btf.Spec // module -> BTF (nil: none)
	cache *btf.Cache           // parses vmlinux's BTF once for all modules

	// addrs[i] is the address of funcs[i] where the kernel lists
	// addresses (available_filter_functions_addrs, 6.5 and later; else
	// nil); more holds the addresses of further functions of the same
	// module and name (static functions), by index.
	addrs []uintptr
	more  map[int][]uintptr

	// shared counts, by index, the further functions of a module and
	// name where the kernel lists names only (before 6.5): a kprobe
	// each must find them by address (attachAtAddresses).
	shared map[int]int

	startOnce sync.Once
	start     map[uintptr]uintptr // see starts
	startErr  error
}

// New returns the fbt provider. It reads the kernel's function list when
// first asked for probes.
func New() *Provider {
	return &Provider{
		infos:      map[int]*info{},
		specs:      map[string]*btf.Spec{},
		cache:      btf.NewCache(),
		kprobeOnly: os.Getenv("DTRACE_FBT") == "kprobe",
		noMulti:    os.Getenv("DTRACE_FBT") == "fentry",
		wide:       map[probeData]bool{},
	}
}

// Name returns "fbt".
func (*Provider) Name() string { return Name }

// ProbeNames returns the only probe names fbt has, so that descriptions
// naming other probes (BEGIN) never read the kernel's function list.
func (*Provider) ProbeNames() []string { return []string{"entry", "return"} }

// Unavailable says why the kernel offers no fbt probes, or "" when it
// does.
func (pv *Provider) Unavailable() string {
	pv.load()
	if len(pv.funcs) > 0 {
		return ""
	}
	return "this kernel does not offer fbt: " + pv.reason
}

// Probes returns the entry and return probes of the functions that match
// d, in the order the kernel lists the functions.
func (pv *Provider) Probes(d provider.Desc) ([]*provider.Probe, error) {
	pv.load()
	names := [2]bool{provider.Match(d.Name, "entry"), provider.Match(d.Name, "return")}
	if !names[0] && !names[1] {
		return nil, nil
	}
	var out []*provider.Probe
	// Probes come from blocks: one allocation per 1,024, not per probe.
	var block []provider.Probe
	alloc := func() *provider.Probe {
		if len(block) == 0 {
			block = make([]provider.Probe, 1024)
		}
		p := &block[0]
		block = block[1:]
		return p
	}
	add := func(i int) {
		f := pv.funcs[i]
		if !provider.Match(d.Module, f.mod) {
			return
		}
		if names[0] {
			p := alloc()
			*p = provider.Probe{Provider: Name, Module: f.mod, Function: f.name, Name: "entry", Data: probeData{fn: i}}
			out = append(out, p)
		}
		if names[1] {
			p := alloc()
			*p = provider.Probe{Provider: Name, Module: f.mod, Function: f.name, Name: "return", Data: probeData{fn: i, ret: true}}
			out = append(out, p)
		}
	}
	if d.Function != "" && !provider.HasGlob(d.Function) {
		for _, i := range pv.byName[d.Function] {
			add(i)
		}
		return out, nil
	}
	if d == (provider.Desc{}) {
		out = make([]*provider.Probe, 0, 2*len(pv.funcs))
	}
	for i, f := range pv.funcs {
		if provider.Match(d.Function, f.name) {
			add(i)
		}
	}
	if len(out) > WideThreshold && d != (provider.Desc{}) && !pv.noMulti {
		pv.mu.Lock()
		// kprobe.multi finds functions by name in vmlinux only; by
		// address, in modules too. A kprobe each finds them by name
		// (or at their addresses, attachAtAddresses).
		mods := !pv.multiOK() || pv.addrs != nil && endbrSize > 0
		for _, p := range out {
			if p.Module == Kernel || mods {
				pv.wide[p.Data.(probeData)] = true
			}
		}
		pv.mu.Unlock()
	}
	return out, nil
}

// WideThreshold is the number of probes above which one description's
// probes share programs: one per side and prologue, whatever the number
// of functions, attached by one kprobe.multi link (one ftrace update)
// where the kernel has it and by a kprobe each otherwise, rather than a
// program and a trampoline or kprobe each.
const WideThreshold = 8

// mode says how a probe runs: on fentry/fexit, or as a wide probe
// (neither: its own kprobe).
func (pv *Provider) mode(p *provider.Probe, in *info) (fentry, wide bool) {
	d, _ := p.Data.(probeData)
	pv.mu.Lock()
	wide = pv.wide[d]
	pv.mu.Unlock()
	// Wide probes never run on fentry: they do not pay for the probe of
	// the kernel's fentry support (a program load and attach).
	return !wide && in.fentry && kfeature.Fentry() == nil, wide
}

// ShareKey puts a wide probe with the others of its side whose prologue
// is the same (number of arguments read on entry, width and sign of the
// return value on return); other probes get programs of their own.
func (pv *Provider) ShareKey(p *provider.Probe) string {
	_, in, ret, err := pv.data(p)
	if err != nil {
		return ""
	}
	if _, wide := pv.mode(p, in); !wide {
		return ""
	}
	if ret {
		return fmt.Sprintf("return/%d/%v", in.retSize, in.retSigned)
	}
	return fmt.Sprintf("entry/%d", pv.entryArgs(in))
}

// Fallback moves a probe the kernel would not run on fentry/fexit to a
// kprobe.
func (pv *Provider) Fallback(p *provider.Probe) bool {
	_, in, _, err := pv.data(p)
	if err != nil {
		return false
	}
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if !in.fentry || kfeature.Fentry() != nil {
		return false
	}
	in.fentry = false
	return true
}

// entryArgs is how many arguments an entry probe's kprobe prologue reads.
func (pv *Provider) entryArgs(in *info) int {
	n := len(in.args)
	if !in.typed {
		n = len(argRegs)
	}
	return min(n, abi.MStateNArgs)
}

// data returns a probe's function, its BTF information and whether it is
// a return probe.
func (pv *Provider) data(p *provider.Probe) (function, *info, bool, error) {
	d, ok := p.Data.(probeData)
	if !ok || p.Owner != nil && p.Owner != provider.Provider(pv) {
		return function{}, nil, false, fmt.Errorf("fbt: probe %s was not made by this provider", p)
	}
	pv.load()
	if d.fn < 0 || d.fn >= len(pv.funcs) {
		return function{}, nil, false, fmt.Errorf("fbt: probe %s was not made by this provider", p)
	}
	return pv.funcs[d.fn], pv.info(d.fn), d.ret, nil
}

// info returns (and caches) what BTF says about function i.
func (pv *Provider) info(i int) *info {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if in := pv.infos[i]; in != nil {
		return in
	}
	f := pv.funcs[i]
	in := &info{}
	pv.infos[i] = in
	spec := pv.spec(f.mod)
	if spec == nil {
		return in
	}
	all, err := spec.AnyTypesByName(f.name)
	if err != nil {
		return in
	}
	var fns []*btf.Func
	for _, t := range all {
		if fn, ok := t.(*btf.Func); ok {
			fns = append(fns, fn)
		}
	}
	if len(fns) == 0 {
		return in
	}
	proto, ok := fns[0].Type.(*btf.FuncProto)
	if !ok {
		return in
	}
	in.typed = true
	simple := len(proto.Params) <= maxFentryArgs
	for _, prm := range proto.Params {
		if prm.Type == nil {
			// A variadic function's "..." has no type.
			simple = false
			continue
		}
		in.args = append(in.args, CType(prm.Type))
		if !ctxReadable(prm.Type) {
			simple = false
		}
	}
	if rt := btf.UnderlyingType(proto.Return); rt != nil {
		if _, void := rt.(*btf.Void); !void {
			in.ret = CType(proto.Return)
			size, signed, _ := scalar(proto.Return)
			in.retSize, in.retSigned = size, signed
			if !ctxReadable(proto.Return) {
				simple = false
			}
		}
	}
	// cilium/ebpf refuses to attach by an ambiguous name; a function in
	// a module is found only if the module's name is the one BTF gives.
	in.fentry = simple && len(fns) == 1 && !noFentry[f.name] && !pv.kprobeOnly
	return in
}

// Program says: a TRACING program on the function's BTF id (fentry or
// fexit), or a kprobe program.
func (pv *Provider) Program(p *provider.Probe) provider.ProgramKind {
	f, in, ret, err := pv.data(p)
	if err != nil {
		return provider.ProgramKind{Type: ebpf.Kprobe}
	}
	fentry, wide := pv.mode(p, in)
	if wide && pv.multiOK() {
		return provider.ProgramKind{Type: ebpf.Kprobe, AttachType: ebpf.AttachTraceKprobeMulti}
	}
	if !fentry {
		return provider.ProgramKind{Type: ebpf.Kprobe}
	}
	at := ebpf.AttachTraceFEntry
	if ret {
		at = ebpf.AttachTraceFExit
	}
	return provider.ProgramKind{Type: ebpf.Tracing, AttachType: at, AttachTo: f.name}
}

// ArgTypes returns the C types of the probe's args[]: the parameters on
// entry; on return an int (the offset) and the return type, if any.
func (pv *Provider) ArgTypes(p *provider.Probe) ([]string, error) {
	_, in, ret, err := pv.data(p)
	if err != nil {
		return nil, err
	}
	if !in.typed {
		return nil, fmt.Errorf("fbt: no type information for %s", p)
	}
	if ret {
		if in.ret == "" {
			return []string{"int"}, nil
		}
		return []string{"int", in.ret}, nil
	}
	if in.args == nil {
		return []string{}, nil
	}
	return in.args, nil
}

// XArgTypes keeps every argument's native type; saying so (rather than
// nil) lets the types be looked up among the kernel's.
func (pv *Provider) XArgTypes(p *provider.Probe) ([]string, error) {
	names, err := pv.ArgTypes(p)
	if err != nil {
		return nil, err
	}
	return make([]string, len(names)), nil
}

// Prologue fills arg[] from the fentry/fexit context or the saved
// registers.
func (pv *Provider) Prologue(p *provider.Probe, mstate int16) asm.Instructions {
	_, in, ret, err := pv.data(p)
	if err != nil {
		return asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.JEq.Imm(asm.R0, 0, provider.SkipLabel)}
	}
	fentry, _ := pv.mode(p, in)
	arg := func(i int) int16 { return mstate + abi.MStateArgs + int16(8*i) }
	var insns asm.Instructions
	for i := 0; i < abi.MStateNArgs; i++ {
		insns = append(insns, provider.StoreImmDW(asm.R7, arg(i), 0))
	}
	if ret {
		insns = append(insns, provider.StoreImmDW(asm.R7, arg(0), -1))
		switch {
		case fentry && in.ret != "":
			insns = append(insns, asm.LoadMem(asm.R0, asm.R6, int16(8*len(in.args)), asm.DWord))
		case fentry:
			return insns
		default:
			insns = append(insns, asm.LoadMem(asm.R0, asm.R6, retReg, asm.DWord))
		}
		insns = append(insns, widen(asm.R0, in.retSize, in.retSigned)...)
		return append(insns, asm.StoreMem(asm.R7, arg(1), asm.R0, asm.DWord))
	}
	n := pv.entryArgs(in)
	for i := 0; i < n; i++ {
		switch {
		case fentry:
			insns = append(insns, asm.LoadMem(asm.R0, asm.R6, int16(8*i), asm.DWord))
		case i < len(argRegs):
			insns = append(insns, asm.LoadMem(asm.R0, asm.R6, argRegs[i], asm.DWord))
		default:
			// On the stack, above the return address.
			insns = append(insns,
				asm.LoadMem(asm.R3, asm.R6, spReg, asm.DWord),
				asm.Add.Imm(asm.R3, int32(8*(i-len(argRegs)+stackArgSlot))),
				asm.Mov.Reg(asm.R1, asm.R7),
				asm.Add.Imm(asm.R1, int32(arg(i))),
				asm.Mov.Imm(asm.R2, 8),
				asm.FnProbeReadKernel.Call(),
			)
			continue
		}
		insns = append(insns, asm.StoreMem(asm.R7, arg(i), asm.R0, asm.DWord))
	}
	return insns
}

// widen sign- or zero-extends the low size bytes of r to 64 bits.
func widen(r asm.Register, size int, signed bool) asm.Instructions {
	if size <= 0 || size >= 8 {
		return nil
	}
	shift := int32(64 - 8*size)
	if signed {
		return asm.Instructions{asm.LSh.Imm(r, shift), asm.ArSh.Imm(r, shift)}
	}
	return asm.Instructions{asm.LSh.Imm(r, shift), asm.RSh.Imm(r, shift)}
}

// Functions returns the names of the traceable functions of module whose
// names match the glob pattern, in the kernel's order (for providers
// built on kernel functions, such as lockstat).
func (pv *Provider) Functions(module, pattern string) []string {
	pv.load()
	var out []string
	for _, f := range pv.funcs {
		if f.mod == module && provider.Match(pattern, f.name) {
			out = append(out, f.name)
		}
	}
	return out
}
