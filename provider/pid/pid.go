package pid

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/symbol"
)

// Error is an error in making probes, with the D_* tag dtrace gives it
// (shown under -xerrtags).
type Error struct {
	Tag string // D_PROC_BADPID, D_PROC_NAME, ...
	Msg string
}

func (e *Error) Error() string { return e.Msg }

// ErrTag returns the D_* tag.
func (e *Error) ErrTag() string { return e.Tag }

func errorf(tag, format string, args ...any) *Error {
	return &Error{Tag: tag, Msg: fmt.Sprintf(format, args...)}
}

// MaxProbes bounds the probes one description may make, as fasttrap's
// fasttrap-max-probes does in illumos: pid$target::: would otherwise make
// one per instruction of every library.
const MaxProbes = 250000

// Kind is the kind of a pid probe.
type Kind int

// The kinds of pid probes.
const (
	Entry Kind = iota
	Return
	Offset
)

// Site is one place a probe is attached: a file offset in an object.
type Site struct {
	// Path opens the object's file (the very inode the process maps).
	Path string
	// FileOffset is where the uprobe goes.
	FileOffset uint64
	// RefCtrOffset is the file offset of a USDT semaphore, or 0.
	RefCtrOffset uint64
	// Cookie is handed to the program through bpf_get_attach_cookie.
	Cookie uint64
	// Suspect says the kernel may refuse the instruction (RefusedPrefix).
	Suspect bool
}

// Probe is the provider's private data of one pid probe.
type Probe struct {
	PID   int
	Kind  Kind
	Sites []Site
	// AtReturns says that a return probe's sites are the instructions
	// that leave the function (with their offsets as cookies), not its
	// entry for a uretprobe.
	AtReturns bool
	// Optional marks a probe a glob function or probe name made: where
	// the kernel cannot put a uprobe on its instruction (hlt,
	// lock-prefixed ones, ...) it is left out rather than failing the
	// enabling, as a probe named exactly would.
	Optional bool
	// Unlinked says that the probe fires before the function's frame is
	// linked (entry, or an offset in the prologue), with the return
	// address at CallerSlot above the stack pointer: the prologue stores
	// it at abi.MStateUCaller for ustack().
	Unlinked   bool
	CallerSlot int16
}

// Provider is the pid provider. It makes probes for any process a
// description names; its own Name, "pid", is only the prefix.
type Provider struct {
	sym *symbol.Symbolizer

	mu    sync.Mutex
	procs map[int]*symbol.Process
}

// New returns the pid provider. Snapshots of the processes it probes go
// to sym (which may be nil), so that the output layer resolves their
// addresses after they exit.
func New(sym *symbol.Symbolizer) *Provider {
	return &Provider{sym: sym, procs: map[int]*symbol.Process{}}
}

// Name returns "pid".
func (*Provider) Name() string { return "pid" }

// Claims reports whether a description's provider field may name pid
// probes: "pid" and a process id, or a glob (which matches the probes made
// so far).
func (pv *Provider) Claims(pattern string) bool {
	if _, ok := ParsePID(pattern, "pid"); ok || pattern == "pid0" {
		// pid0 is claimed to be refused in dtrace's words (D_PROC_BADPID).
		return true
	}
	return pattern == "" || provider.HasGlob(pattern)
}

// globPID reads a provider field such as "p*d1234" that chooses from the
// providers of process 1234 with a pattern: the pid provider's name when
// the pattern matches "pid".
func globPID(field string) (string, bool) {
	pattern, p, ok := provider.SplitPIDGlob(field)
	if !ok || !provider.Match(pattern, "pid") {
		return "", false
	}
	return "pid" + strconv.Itoa(p), true
}

// ParsePID splits a provider name such as "pid1234" into its process id,
// given the prefix; it reports false for anything else.
func ParsePID(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" || rest[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] < '0' || rest[i] > '9' {
			return 0, false
		}
	}
	pid, err := strconv.Atoi(rest)
	if err != nil || pid <= 0 || pid > 1<<22 {
		return 0, false
	}
	return pid, true
}

// Process returns the provider's snapshot of pid, taking it on first use.
func (pv *Provider) Process(pid int) (*symbol.Process, error) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if p := pv.procs[pid]; p != nil {
		return p, nil
	}
	var p *symbol.Process
	var err error
	if pv.sym != nil {
		p, err = pv.sym.Snapshot(pid)
	} else {
		p, err = symbol.ReadProcess(pid)
	}
	if err != nil {
		return nil, err
	}
	pv.procs[pid] = p
	return p, nil
}

// Forget drops the snapshot of pid, so that the next description naming
// it reads its mappings again (after it has loaded or unloaded objects).
func (pv *Provider) Forget(pid int) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	delete(pv.procs, pid)
}

// Pids returns the processes descriptions have named.
func (pv *Provider) Pids() []int {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	out := make([]int, 0, len(pv.procs))
	for p := range pv.procs {
		out = append(out, p)
	}
	return out
}

// ModuleMatches reports whether a description's module field names mod:
// a glob matches the base name (or a.out for the executable); an exact
// name matches the base name, the full path, a.out for the executable,
// the soname, or the base name up to one of its dots (libc and libc.so
// for libc.so.6), as libproc's lookup of an object by name does.
func ModuleMatches(pattern string, mod *symbol.Module, soname string) bool {
	if pattern == "" {
		return true
	}
	if provider.HasGlob(pattern) {
		return provider.Match(pattern, mod.Name) || mod.IsExe && provider.Match(pattern, "a.out")
	}
	switch {
	case pattern == mod.Name, pattern == mod.Path, mod.IsExe && pattern == "a.out":
		return true
	case soname != "" && pattern == soname:
		return true
	case strings.HasPrefix(mod.Name, pattern+"."):
		return true
	}
	return false
}

// Probes makes the probes d describes in the process its provider field
// names. Descriptions without a process id make nothing: the Registry
// then matches the probes made before.
func (pv *Provider) Probes(d provider.Desc) ([]*provider.Probe, error) {
	if d.Provider == "pid0" {
		return nil, errorf("D_PROC_BADPID", "pid0 does not contain a valid pid")
	}
	if name, ok := globPID(d.Provider); ok {
		d.Provider = name
	}
	pid, ok := ParsePID(d.Provider, "pid")
	if !ok {
		return nil, nil
	}
	if ArchRegs() == nil {
		return nil, fmt.Errorf("user probes are not supported on %s", runtime.GOARCH)
	}
	proc, err := pv.Process(pid)
	if err != nil {
		return nil, errorf("D_PROC_GRAB", "failed to grab process %d", pid)
	}
	name := d.Name
	if d.Function == "-" {
		return pv.absolute(d, proc)
	}
	var offset uint64
	isOffset := false
	if name != "" && !provider.HasGlob(name) && name != "entry" && name != "return" {
		off, err := strconv.ParseUint(name, 16, 64)
		if err != nil {
			return nil, errorf("D_PROC_NAME", "'%s' is an invalid probe name", name)
		}
		offset, isOffset = off, true
	}
	prov := "pid" + strconv.Itoa(pid)
	var out []*provider.Probe
	// Each object's file stays open while its probes are made: their
	// code is read function by function.
	var codes []*symbol.CodeFile
	defer func() {
		for _, c := range codes {
			c.Close()
		}
	}()
	// Libraries not mapped yet (a -c process held before the dynamic
	// linker ran) are probed by file all the same.
	for _, mod := range append(proc.Modules(), proc.PendingModules()...) {
		// Read a library's symbols only when the description may name
		// it: by its name, or, for an exact name, by its soname.
		if !ModuleMatches(d.Module, mod, "") && provider.HasGlob(d.Module) {
			continue
		}
		openPath := proc.OpenPath(mod)
		obj, err := symbol.LoadObject(openPath)
		if err != nil || !ModuleMatches(d.Module, mod, obj.Soname) {
			continue
		}
		if d.Function != "" && !provider.HasGlob(d.Function) && d.Module != "" && !provider.HasGlob(d.Module) {
			if _, ok := obj.SymbolValue(d.Function); !ok {
				return nil, errorf("D_PROC_FUNC", "failed to lookup '%s' in module '%s'", d.Function, d.Module)
			}
		}
		code := obj.OpenCode()
		codes = append(codes, code)
		// Functions of one name (static functions of several files) make
		// one probe with a site each.
		sites := map[string][]symbol.Func{}
		var order []string
		funcs := obj.Funcs()
		taken := map[uint64]bool{}
		glob := provider.HasGlob(d.Function) || d.Function == ""
		for i, f := range funcs {
			// As in dtrace: only functions with a size, the ones whose
			// extent (and so whose instructions and returns) is known,
			// and not in writable memory, which may be rewritten.
			if f.Size == 0 || taken[f.Value] || !provider.Match(d.Function, f.Name) || !obj.Executable(f.Value) {
				continue
			}
			// A glob passes over compiler-made names (main.cold) and
			// versioned ones, as dtrace does.
			if glob && strings.ContainsAny(f.Name, ".@") {
				continue
			}
			// One probe per address: aliases (a weak symbol and its
			// target) name one function. A glob names it by the first
			// alias it matches in the order of preference, an exact name
			// by the preferred alias (the first with a size), as
			// dtrace's lookup by address does.
			taken[f.Value] = true
			name := f.Name
			if !glob {
				for j := i; j > 0 && funcs[j-1].Value == f.Value; j-- {
					if funcs[j-1].Size != 0 {
						name = funcs[j-1].Name
					}
				}
			}
			if _, ok := sites[name]; !ok {
				order = append(order, name)
			}
			sites[name] = append(sites[name], f)
		}
		for _, fn := range order {
			add := func(pname string, p *Probe) {
				if len(p.Sites) > 0 {
					p.Optional = glob || name == "" || provider.HasGlob(name)
					out = append(out, &provider.Probe{Provider: prov, Module: mod.Name, Function: fn, Name: pname, Data: p})
				}
			}
			var refused error
			mk := func(kind Kind, pname string, off uint64, funcs []symbol.Func) {
				p := &Probe{PID: pid, Kind: kind}
				for _, f := range funcs {
					fo, ok := obj.FileOffset(f.Value + off)
					if !ok {
						continue
					}
					if misemulatedAt(code, f, off) {
						// Left out of a glob, as a site the kernel refuses.
						if !glob && name != "" && !provider.HasGlob(name) && refused == nil {
							refused = errorf("D_PROC_CREATEFAIL", "failed to create probe at '%s+0x%x': the kernel would emulate its instruction instead of running it", f.Name, off)
						}
						continue
					}
					slot, unlinked := callerSlot(code, f, kind, off)
					if len(p.Sites) == 0 {
						p.Unlinked, p.CallerSlot = unlinked, slot
					} else if p.Unlinked != unlinked || p.CallerSlot != slot {
						// Sites disagree: one program serves them all.
						p.Unlinked = false
					}
					p.Sites = append(p.Sites, Site{Path: openPath, FileOffset: fo, Suspect: suspectAt(code, f, off)})
				}
				add(pname, p)
			}
			if isOffset {
				// Probe the functions of the name that have an instruction
				// there; naming one function exactly, it must have one.
				var ok []symbol.Func
				for _, f := range sites[fn] {
					if err := checkOffset(code, f, offset); err != nil {
						if provider.HasGlob(d.Function) || d.Function == "" {
							continue
						}
						return nil, err
					}
					ok = append(ok, f)
				}
				mk(Offset, name, offset, ok)
				if refused != nil {
					return nil, refused
				}
				continue
			}
			if provider.Match(name, "entry") {
				mk(Entry, "entry", 0, sites[fn])
			}
			if provider.Match(name, "return") {
				if p := returnProbe(code, openPath, pid, sites[fn]); p != nil {
					add("return", p)
				} else if !indirectOnly(code, sites[fn]) {
					mk(Return, "return", 0, sites[fn])
				}
			}
			if refused != nil {
				return nil, refused
			}
			if name == "entry" || name == "return" || len(sites[fn]) != 1 {
				continue
			}
			// A glob name also names every instruction, by its offset.
			offs, _ := instructions(code, sites[fn][0])
			for _, o := range offs {
				if pn := strconv.FormatUint(o, 16); provider.Match(name, pn) {
					mk(Offset, pn, o, sites[fn])
				}
			}
			if len(out) > MaxProbes {
				return nil, errorf("D_PROC_CREATEFAIL", "failed to create probes in '%s': more than %d probes", mod.Name, MaxProbes)
			}
		}
	}
	return out, nil
}

// absolute makes the probe of pidN:a.out:-:ADDR, at an absolute address
// of the executable.
func (pv *Provider) absolute(d provider.Desc, proc *symbol.Process) ([]*provider.Probe, error) {
	if provider.HasGlob(d.Name) || d.Name == "" {
		return nil, errorf("D_PROC_NAME", "only individual addresses may be specified with the '-' function")
	}
	var exe *symbol.Module
	for _, mod := range proc.Modules() {
		if mod.IsExe {
			exe = mod
		}
	}
	if exe == nil || d.Module != "" && !(ModuleMatches(d.Module, exe, "") && !provider.HasGlob(d.Module)) {
		return nil, errorf("D_PROC_LIB", "only the a.out module is valid with the '-' function")
	}
	addr, err := strconv.ParseUint(d.Name, 16, 64)
	if err != nil {
		return nil, errorf("D_PROC_NAME", "'%s' is an invalid probe name", d.Name)
	}
	path := proc.OpenPath(exe)
	obj, err := symbol.LoadObject(path)
	if err != nil {
		return nil, err
	}
	bias, ok := proc.Bias(exe, obj)
	if !ok {
		return nil, fmt.Errorf("cannot place %s in memory", exe.Path)
	}
	vaddr := addr - bias
	if f, ok := obj.Lookup(vaddr); ok {
		code := obj.OpenCode()
		err := checkOffset(code, f, vaddr-f.Value)
		code.Close()
		if err != nil {
			return nil, err
		}
	}
	fo, ok := obj.FileOffset(vaddr)
	if !ok {
		return nil, errorf("D_PROC_NAME", "address 0x%x is not in %s", addr, exe.Name)
	}
	p := &Probe{PID: proc.PID, Kind: Offset, Sites: []Site{{Path: path, FileOffset: fo}}}
	return []*provider.Probe{{Provider: "pid" + strconv.Itoa(proc.PID), Module: exe.Name, Function: "-", Name: d.Name, Data: p}}, nil
}

// returnProbe makes the return probe of functions as illumos does: a
// uprobe on every instruction that leaves them (see Returns), whose
// attach cookie tells its offset, arg0 of the probe, and for a
// conditional jump its condition (ReturnCookie). It returns nil where an
// instruction cannot be decoded: the probe is then a uretprobe on their
// entries, which knows the return value but not where the function
// returned (arg0 is 0). So it is where no instruction leaves them (main
// looping forever): the probe exists, as in dtrace on Linux, and fires if
// they do return. Functions leaving only by indirect jmps have no return
// probe (IndirectOnly).
func returnProbe(obj *symbol.CodeFile, path string, pid int, funcs []symbol.Func) *Probe {
	if runtime.GOARCH != "amd64" {
		return nil
	}
	p := &Probe{PID: pid, Kind: Return}
	for _, f := range funcs {
		code, err := obj.Code(f)
		if err != nil {
			return nil
		}
		exits, err := Returns(code)
		if err != nil {
			return nil
		}
		for _, e := range exits {
			if e.Off >= 1<<abi.CookieOffBits {
				return nil
			}
			if fo, ok := obj.FileOffset(f.Value + e.Off); ok {
				p.Sites = append(p.Sites, Site{Path: path, FileOffset: fo, Cookie: ReturnCookie(e)})
			}
		}
	}
	if len(p.Sites) == 0 {
		return nil
	}
	p.AtReturns = true
	return p
}

// checkOffset refuses an offset past the end of the function or in the
// middle of an instruction: a breakpoint there would corrupt the program.
func checkOffset(obj *symbol.CodeFile, f symbol.Func, off uint64) error {
	if off >= f.Size {
		return errorf("D_PROC_OFF", "offset 0x%x outside of function '%s'", off, f.Name)
	}
	offs, err := instructions(obj, f)
	for _, o := range offs {
		if o == off {
			return nil
		}
	}
	if err != nil {
		return errorf("D_PROC_CREATEFAIL", "failed to create probe at '%s+0x%x': %v", f.Name, off, err)
	}
	return errorf("D_PROC_CREATEFAIL", "failed to create probe at '%s+0x%x': not an instruction boundary", f.Name, off)
}

// indirectOnly reports whether the functions of one name leave only by
// indirect jumps (IndirectOnly): they have no return probe.
func indirectOnly(obj *symbol.CodeFile, funcs []symbol.Func) bool {
	if runtime.GOARCH != "amd64" {
		return false
	}
	for _, f := range funcs {
		code, err := obj.Code(f)
		if err != nil || !IndirectOnly(code) {
			return false
		}
	}
	return len(funcs) > 0
}

// misemulatedAt reports whether the instruction at offset off of f is one
// the kernel's uprobes would emulate wrongly (Misemulated): a probe there
// would change what the program computes.
func misemulatedAt(obj *symbol.CodeFile, f symbol.Func, off uint64) bool {
	if runtime.GOARCH != "amd64" {
		return false
	}
	code, err := obj.Code(f)
	if err != nil || off >= uint64(len(code)) {
		return false
	}
	return Misemulated(code[off:])
}

// suspectAt reports whether the kernel may refuse a uprobe at offset off
// of f (RefusedPrefix, on x86-64).
func suspectAt(obj *symbol.CodeFile, f symbol.Func, off uint64) bool {
	if runtime.GOARCH != "amd64" {
		return false
	}
	code, err := obj.Code(f)
	return err == nil && off < uint64(len(code)) && RefusedPrefix(code[off:])
}

// instructions returns the offsets of a function's instructions: decoded
// on x86-64, every fourth byte on arm64.
func instructions(obj *symbol.CodeFile, f symbol.Func) ([]uint64, error) {
	switch runtime.GOARCH {
	case "amd64":
		code, err := obj.Code(f)
		if err != nil {
			return nil, err
		}
		return Instructions(code)
	case "arm64":
		var offs []uint64
		for o := uint64(0); o < f.Size; o += 4 {
			offs = append(offs, o)
		}
		return offs, nil
	}
	return nil, fmt.Errorf("no instruction decoder for %s", runtime.GOARCH)
}

// callerSlot says whether a probe of kind at offset off of f fires before
// f's frame is linked, and where the return address is then (CallerSlot):
// at entry it is on top of the stack whatever the prologue; at an offset,
// only the standard x86-64 prologue is understood.
func callerSlot(obj *symbol.CodeFile, f symbol.Func, kind Kind, off uint64) (int16, bool) {
	if runtime.GOARCH != "amd64" || kind == Return {
		return 0, false
	}
	if kind == Entry || off == 0 {
		return 0, true
	}
	code, err := obj.Code(f)
	if err != nil {
		return 0, false
	}
	return CallerSlot(code, off)
}

// Program says: a uprobe program (see ProgramKind).
func (*Provider) Program(*provider.Probe) provider.ProgramKind {
	return ProgramKind()
}

// Prologue checks the process and fills the arguments from the registers
// (and the stack) as the probe's kind wants them.
func (*Provider) Prologue(p *provider.Probe, mstate int16) asm.Instructions {
	d := p.Data.(*Probe)
	regs := ArchRegs()
	insns := CheckPID(d.PID)
	if d.Kind == Return {
		return append(insns, regs.ReturnArgs(mstate, d.AtReturns, siteCookie(d, regs))...)
	}
	insns = append(insns, regs.EntryArgs(mstate)...)
	if d.Unlinked {
		// bpf_probe_read_user leaves 0 (no caller) when the read faults.
		insns = append(insns,
			asm.Mov.Reg(asm.R1, asm.R7),
			asm.Add.Imm(asm.R1, int32(mstate+abi.MStateUCaller)),
			asm.Mov.Imm(asm.R2, 8),
			asm.LoadMem(asm.R3, asm.R6, regs.SP, asm.DWord),
			asm.Add.Imm(asm.R3, int32(d.CallerSlot)),
			asm.FnProbeReadUser.Call(),
		)
	}
	return insns
}
