package usdt

import (
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/pid"
	"github.com/dtrace-go/dtrace/symbol"
)

// Site is one place a probe fires: where to attach and how to read the
// arguments there.
type Site struct {
	pid.Site
	// PC is the link-time address of the site, against which %rip-relative
	// arguments are resolved at run time.
	PC   uint64
	Args []Arg
	// Syms holds the link-time addresses of the symbols the arguments
	// name.
	Syms map[string]uint64
}

// Probe is the provider's private data of one USDT probe.
type Probe struct {
	// PID filters the probe to one process; 0 fires it everywhere.
	PID   int
	Sites []Site
}

// Provider is the USDT provider.
type Provider struct {
	sym   *symbol.Symbolizer
	paths []string

	mu      sync.Mutex
	scanned bool
	// objects are the files with SDT notes found by the scan of running
	// processes and the given paths, by path; names are their providers.
	objects map[string][]string
	names   map[string]bool
	// made says that probes have been made, which descriptions with an
	// empty provider field then match.
	made bool
	// target is the -c or -p process (0: none), whose providers
	// descriptions with an empty or glob provider field match by their
	// per-process names (myprov1234), as dtrace lists a grabbed
	// process's providers among its probes.
	target int
	// pids are the processes whose providers descriptions named.
	pids map[int]bool
	// noted holds, per process, the objects with SDT notes of its latest
	// snapshot, so that the descriptions of a program read them once.
	noted map[int]notedObjects
}

// notedObjects are the objects with SDT notes that one snapshot of a
// process maps or will map.
type notedObjects struct {
	proc *symbol.Process
	objs []notedObject
}

type notedObject struct {
	mod      *symbol.Module
	openPath string
	obj      *symbol.Object
}

// MayMatch reports whether d may name a USDT probe
// (provider.DescFilter): not BEGIN, END or ERROR alone, which would
// otherwise read every object of the -c or -p process for a program that
// names none of its probes.
func (pv *Provider) MayMatch(d provider.Desc) bool { return !d.DtraceOnly() }

// Pids returns the processes whose providers descriptions have named.
func (pv *Provider) Pids() []int {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	var out []int
	for p := range pv.pids {
		out = append(out, p)
	}
	return out
}

// SetTarget makes the providers of process pid (the -c or -p process)
// match descriptions whose provider field is empty or a glob, under their
// per-process names, instead of the file-based probes that fire in every
// process.
func (pv *Provider) SetTarget(pid int) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	pv.target = pid
}

// New returns the USDT provider. Objects named in paths are searched for
// probes besides those mapped by running processes. Snapshots of the
// processes it probes go to sym (which may be nil).
func New(sym *symbol.Symbolizer, paths ...string) *Provider {
	return &Provider{sym: sym, paths: paths}
}

// Name returns "usdt"; probe provider names are those of the notes.
func (*Provider) Name() string { return "usdt" }

// Claims reports whether pattern may name USDT probes: a live process's
// provider (myprov1234), or a provider name or glob matching a provider
// in the objects found.
func (pv *Provider) Claims(pattern string) bool {
	if name, _, ok := splitPID(pattern); ok {
		// pid1234 is the pid provider's.
		return name != "pid"
	}
	if _, _, ok := provider.SplitPIDGlob(pattern); ok {
		// p*d1234: the providers of process 1234 the pattern matches.
		return true
	}
	if pattern == "" {
		// An empty provider field (BEGIN, :::entry) would otherwise scan
		// every process for every script; it matches the probes made by
		// other descriptions and the target's only.
		pv.mu.Lock()
		defer pv.mu.Unlock()
		return pv.made || pv.target != 0
	}
	if len(pv.targetProbes(provider.Desc{Provider: pattern})) > 0 {
		return true
	}
	pv.scan()
	pv.mu.Lock()
	defer pv.mu.Unlock()
	for n := range pv.names {
		if provider.Match(pattern, n) {
			return true
		}
	}
	return false
}

// splitPID splits "postgresql1234" into provider and pid when the process
// exists; a provider whose own name ends in digits cannot be told apart
// otherwise.
func splitPID(s string) (string, int, bool) {
	if provider.HasGlob(s) {
		return "", 0, false
	}
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == 0 || i == len(s) || s[i] == '0' {
		return "", 0, false
	}
	p, err := strconv.Atoi(s[i:])
	if err != nil || p <= 0 {
		return "", 0, false
	}
	if _, err := os.Stat("/proc/" + s[i:]); err != nil {
		return "", 0, false
	}
	return s[:i], p, true
}

// scan finds, once, the files with SDT notes that running processes map,
// and the given paths.
func (pv *Provider) scan() {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if pv.scanned {
		return
	}
	pv.scanned = true
	pv.objects = map[string][]string{}
	pv.names = map[string]bool{}
	seen := map[[2]uint64]bool{}
	consider := func(p string) {
		fi, err := os.Stat(p)
		if err != nil {
			return
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			key := [2]uint64{uint64(st.Dev), st.Ino}
			if seen[key] {
				return
			}
			seen[key] = true
		}
		notes, err := symbol.ReadNotes(p, NoteSection)
		if err != nil || len(notes) == 0 {
			return
		}
		provs := map[string]bool{}
		for _, n := range notes {
			if nn, err := ParseClassNote(n.Desc, n.Class); err == nil && n.Owner == NoteOwner && n.Type == NoteType {
				provs[nn.Provider] = true
			}
		}
		for name := range provs {
			pv.objects[p] = append(pv.objects[p], name)
			pv.names[name] = true
		}
	}
	for _, p := range pv.paths {
		consider(p)
	}
	self := os.Getpid()
	for _, n := range symbol.PIDs() {
		if n == self {
			continue
		}
		proc, err := symbol.ReadProcess(n)
		if err != nil {
			continue
		}
		for _, mod := range proc.Modules() {
			// The path as the process sees it: the same file for processes
			// in our mount namespace, which is what tracing by path needs.
			consider(mod.Path)
		}
	}
}

// Probes makes the probes d describes: those of one process when its
// provider field ends in a live process's id, those of every object found
// otherwise.
func (pv *Provider) Probes(d provider.Desc) ([]*provider.Probe, error) {
	if ps := pv.targetProbes(d); len(ps) > 0 {
		return ps, nil
	}
	if d.Provider == "" {
		// The standing probes (dtrace -l) and descriptions without a
		// provider: none but those made before (see Claims).
		return nil, nil
	}
	if name, p, ok := splitPID(d.Provider); ok {
		return pv.processProbes(d, func(n string) bool { return n == name }, p)
	}
	if pattern, p, ok := provider.SplitPIDGlob(d.Provider); ok {
		// The pid provider's name is the pid provider's, even where a
		// note names a provider "pid".
		return pv.processProbes(d, func(n string) bool { return n != "pid" && provider.Match(pattern, n) }, p)
	}
	pv.scan()
	pv.mu.Lock()
	var paths []string
	for p, names := range pv.objects {
		for _, n := range names {
			if provider.Match(d.Provider, n) {
				paths = append(paths, p)
				break
			}
		}
	}
	pv.mu.Unlock()
	sort.Strings(paths)
	var out []*provider.Probe
	for _, p := range paths {
		obj, err := symbol.LoadObject(p)
		if err != nil {
			continue
		}
		mod := &symbol.Module{Path: p, Name: path.Base(p)}
		if !pid.ModuleMatches(d.Module, mod, obj.Soname) {
			continue
		}
		probes, err := makeProbes(d, obj, p, mod.Name, func(string) bool { return true }, "", 0)
		if err != nil {
			return nil, err
		}
		out = append(out, probes...)
	}
	pv.noteMade(out)
	return out, nil
}

// targetProbes makes the probes of the target's providers that d
// describes when its provider field is empty or a glob: the target's
// providers are then named with its pid, as a description naming them so
// would make them. Errors (the target has exited) make none.
func (pv *Provider) targetProbes(d provider.Desc) []*provider.Probe {
	pv.mu.Lock()
	t := pv.target
	pv.mu.Unlock()
	if t == 0 || d.Provider != "" && !provider.HasGlob(d.Provider) {
		return nil
	}
	probes, err := pv.processProbes(d, func(n string) bool { return n != "pid" && provider.Match(d.Provider, n+strconv.Itoa(t)) }, t)
	if err != nil {
		return nil
	}
	// They fire where the file-based probes would (in the target's
	// children too, as in dtrace): only their names are the target's.
	for _, p := range probes {
		p.Data.(*Probe).PID = 0
	}
	return probes
}

func (pv *Provider) noteMade(probes []*provider.Probe) {
	if len(probes) > 0 {
		pv.mu.Lock()
		pv.made = true
		pv.mu.Unlock()
	}
}

// processProbes makes the probes d describes of process p's providers
// that want accepts.
func (pv *Provider) processProbes(d provider.Desc, want func(string) bool, p int) ([]*provider.Probe, error) {
	if pid.ArchRegs() == nil {
		return nil, fmt.Errorf("user probes are not supported on this architecture")
	}
	proc, err := pv.sym.Process(p)
	if err != nil {
		return nil, err
	}
	pv.mu.Lock()
	if pv.pids == nil {
		pv.pids = map[int]bool{}
	}
	pv.pids[p] = true
	pv.mu.Unlock()
	var out []*provider.Probe
	for _, o := range pv.notedObjects(p, proc) {
		if !pid.ModuleMatches(d.Module, o.mod, o.obj.Soname) {
			continue
		}
		probes, err := makeProbes(d, o.obj, o.openPath, o.mod.Name, want, strconv.Itoa(p), p)
		if err != nil {
			return nil, err
		}
		out = append(out, probes...)
	}
	pv.noteMade(out)
	return out, nil
}

// notedObjects returns the objects with SDT notes that snapshot proc of
// process p maps, and the libraries it will map (a -c process held before
// the dynamic linker ran: they are probed by file all the same), read
// once per snapshot.
func (pv *Provider) notedObjects(p int, proc *symbol.Process) []notedObject {
	pv.mu.Lock()
	n, ok := pv.noted[p]
	pv.mu.Unlock()
	if ok && n.proc == proc {
		return n.objs
	}
	var objs []notedObject
	for _, mod := range append(proc.Modules(), proc.PendingModules()...) {
		openPath := proc.OpenPath(mod)
		notes, err := symbol.ReadNotes(openPath, NoteSection)
		if err != nil || len(notes) == 0 {
			continue
		}
		obj, err := symbol.LoadObject(openPath)
		if err != nil {
			continue
		}
		objs = append(objs, notedObject{mod: mod, openPath: openPath, obj: obj})
	}
	pv.mu.Lock()
	if pv.noted == nil {
		pv.noted = map[int]notedObjects{}
	}
	pv.noted[p] = notedObjects{proc: proc, objs: objs}
	pv.mu.Unlock()
	return objs
}

// makeProbes turns the notes of obj whose provider passes want and whose
// function and name match d into probes, one per provider, function and
// name, with a site per note.
func makeProbes(d provider.Desc, obj *symbol.Object, openPath, module string, want func(string) bool, suffix string, p int) ([]*provider.Probe, error) {
	notes, err := Notes(obj)
	if err != nil {
		return nil, err
	}
	var out []*provider.Probe
	byName := map[string]*Probe{}
	for _, n := range notes {
		if !want(n.Provider) {
			continue
		}
		prov := n.Provider + suffix
		if suffix == "" && !provider.Match(d.Provider, prov) {
			continue
		}
		fn := ""
		if f, ok := obj.Lookup(n.PC); ok {
			fn = f.Name
		}
		name := ProbeName(n.Name)
		if !provider.Match(d.Function, fn) || !provider.Match(d.Name, name) {
			continue
		}
		off, ok := obj.FileOffset(n.PC)
		if !ok {
			continue
		}
		site := Site{Site: pid.Site{Path: openPath, FileOffset: off}, PC: n.PC, Args: n.Args}
		if n.Semaphore != 0 {
			// The kernel writes the semaphore (two bytes) in the
			// process's copy of this file's writable segment; a note
			// naming any other address is refused, with its site.
			so, ok := SemaphoreOffset(obj, n.Semaphore)
			if !ok {
				continue
			}
			site.RefCtrOffset = so
		}
		for _, a := range n.Args {
			if a.Sym == "" {
				continue
			}
			if v, ok := obj.SymbolValue(a.Sym); ok {
				if site.Syms == nil {
					site.Syms = map[string]uint64{}
				}
				site.Syms[a.Sym] = v
			}
		}
		key := prov + ":" + fn + ":" + name
		pr := byName[key]
		if pr == nil {
			pr = &Probe{PID: p}
			byName[key] = pr
			out = append(out, &provider.Probe{Provider: prov, Module: module, Function: fn, Name: name, Data: pr})
		}
		site.Cookie = uint64(len(pr.Sites))
		pr.Sites = append(pr.Sites, site)
	}
	return out, nil
}

// Program says: a uprobe program (see ProgramKind).
func (*Provider) Program(*provider.Probe) provider.ProgramKind {
	return pid.ProgramKind()
}

// Prologue checks the process (for probes of one process), finds the site
// that fired from the attach cookie and loads its arguments.
func (*Provider) Prologue(p *provider.Probe, mstate int16) asm.Instructions {
	d := p.Data.(*Probe)
	var insns asm.Instructions
	if d.PID != 0 {
		insns = append(insns, pid.CheckPID(d.PID)...)
	}
	const done = "dt_usdt_done"
	if len(d.Sites) == 1 {
		insns = append(insns, siteArgs(d.Sites[0], mstate)...)
	} else {
		insns = append(insns,
			asm.Mov.Reg(asm.R1, asm.R6),
			asm.FnGetAttachCookie.Call(),
		)
		for i := range d.Sites {
			insns = append(insns, asm.JEq.Imm(asm.R0, int32(i), fmt.Sprintf("dt_usdt_site%d", i)))
		}
		insns = append(insns, asm.Ja.Label(provider.SkipLabel))
		for i, s := range d.Sites {
			code := siteArgs(s, mstate)
			code[0] = code[0].WithSymbol(fmt.Sprintf("dt_usdt_site%d", i))
			insns = append(insns, code...)
			insns = append(insns, asm.Ja.Label(done))
		}
	}
	return append(insns, asm.Mov.Imm(asm.R0, 0).WithSymbol(done))
}

// PrologueNoArgs is the Prologue of a probe whose clauses read no
// argument: the process check alone, without finding the site or reading
// its operands (a memory operand is a bpf_probe_read_user each firing).
func (*Provider) PrologueNoArgs(p *provider.Probe, _ int16) asm.Instructions {
	d := p.Data.(*Probe)
	if d.PID != 0 {
		return pid.CheckPID(d.PID)
	}
	return nil
}

// Attach puts a uprobe on every site, with its semaphore as reference
// counter and its index as cookie.
func (*Provider) Attach(p *provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	d, ok := p.Data.(*Probe)
	if !ok {
		return nil, fmt.Errorf("usdt: probe %s was not made by this provider", p)
	}
	sites := make([]pid.Site, len(d.Sites))
	for i, s := range d.Sites {
		sites[i] = s.Site
	}
	return pid.AttachSites(sites, d.PID, false, prog)
}

// String describes a probe's sites, for debugging.
func (d *Probe) String() string {
	var b strings.Builder
	for _, s := range d.Sites {
		fmt.Fprintf(&b, "%s+0x%x sem 0x%x %v\n", s.Path, s.FileOffset, s.RefCtrOffset, s.Args)
	}
	return b.String()
}
