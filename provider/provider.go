package provider

import (
	"context"
	"fmt"
	"io"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// Probe is one probe point. The Registry sets ID; the provider that made
// the probe fills the rest and may keep private data in Data.
type Probe struct {
	ID                               uint32
	Provider, Module, Function, Name string
	// Owner is the provider that offers the probe.
	Owner Provider
	// Data is private to Owner.
	Data any
}

// String gives the probe's full name, "profile:::tick-1s".
func (p *Probe) String() string {
	return p.Provider + ":" + p.Module + ":" + p.Function + ":" + p.Name
}

// Names returns the full names of ps, in order.
func Names(ps []*Probe) []string {
	var names []string
	for _, p := range ps {
		names = append(names, p.String())
	}
	return names
}

// ProgramKind tells the loader what kind of BPF program a probe needs.
type ProgramKind struct {
	Type       ebpf.ProgramType
	AttachType ebpf.AttachType
	// AttachTo names the attach target for program types that need one at
	// load time (tp_btf: the tracepoint name).
	AttachTo string
	// TestRun marks probes that are never attached: the library fires
	// them with BPF_PROG_TEST_RUN (dtrace:::BEGIN, END, ERROR).
	TestRun bool
}

// Provider offers probes and knows how to run programs on them.
type Provider interface {
	// Name is the provider name matched against a description's first
	// field.
	Name() string
	// Probes returns the provider's probes whose module, function and
	// name match d (its provider field has already matched). A provider
	// may create probes on demand for names it can parse (tick-7ms);
	// Probes(Desc{}) lists the probes that exist without asking, in a
	// stable order. Returned probes have no ID yet; the Registry assigns
	// one the first time it sees a probe name, so a provider may return
	// fresh values for probes it returned before.
	Probes(d Desc) ([]*Probe, error)
	// Program tells the program type the probe needs.
	Program(p *Probe) ProgramKind
	// Prologue returns instructions that fill the machine state from the
	// program context: on entry R6 holds the context and R7 points to
	// this CPU's scratch area, whose machine state begins at offset
	// mstate. The prologue writes the probe arguments (arg0..arg9, zero
	// where the probe has fewer) and may clobber R0-R5 and R8-R9 but
	// must keep R6 and R7. It must not exit; to end a firing that is not
	// for this probe (a shared tracepoint, another process), it jumps to
	// SkipLabel. Labels it defines must be unique in the program: prefix
	// them with "dt_<provider>_".
	Prologue(p *Probe, mstate int16) asm.Instructions
	// Attach attaches a loaded program to the probe; closing the result
	// detaches it. Everything is fd-based, so a killed process leaves
	// nothing behind.
	Attach(p *Probe, prog *ebpf.Program) (io.Closer, error)
}

// ArgsSkipper is implemented by providers whose prologue spends work on
// the arguments that a probe whose clauses never read them can do
// without (a wide system call probe reads them from the saved user
// registers with a helper call on every firing). When no clause of the
// probe reads arg0-arg9 or args[], the loader asks for PrologueNoArgs in
// place of Prologue; it keeps everything else the Prologue does (the
// skip of other firings, errno, what Identify needs), and the arguments
// in the machine state are then undefined.
type ArgsSkipper interface {
	PrologueNoArgs(p *Probe, mstate int16) asm.Instructions
}

// CPUChooser is implemented by providers that open an event per CPU
// (profile's perf events): with dtrace's cpu option set, ChooseCPU(cpu)
// asks for events on that CPU only (tick probes fire there).
type CPUChooser interface {
	ChooseCPU(cpu int)
}

// SkipLabel is the label a prologue jumps to when the firing is not for
// its probe: the program then returns without running any clause.
const SkipLabel = "dt_probe_skip"

// ListHeader is the header line of dtrace -l.
const ListHeader = "   ID   PROVIDER            MODULE                          FUNCTION NAME"

// ListLine formats one probe for dtrace -l, aligned under ListHeader.
func ListLine(p *Probe) string {
	return fmt.Sprintf("%5d %10s %17s %33s %s", p.ID, p.Provider, p.Module, p.Function, p.Name)
}

// NotSupported is the error of attaching probe p where the kernel
// facility its provider uses (kprobes, perf events, tracepoints) does not
// exist: on anything but Linux.
func NotSupported(p *Probe) error {
	return fmt.Errorf("attach %s: %w", p, ebpf.ErrNotSupported)
}

// Sharer is implemented by providers some of whose probes can run one
// program together: thousands of fbt probes of one description would
// otherwise each load a program of their own. The loader gives probes of
// one non-empty ShareKey that run the same clauses one program, built from
// the Prologue of any of them; at run time the program finds the probe's
// id with bpf_get_attach_cookie, so AttachShared must attach it with each
// probe's ID as the cookie, unless the provider is also an Identifier.
type Sharer interface {
	// ShareKey names the program a probe can share (probes with equal
	// keys have equal Program kinds and Prologues), or "" when the probe
	// needs a program of its own.
	ShareKey(p *Probe) string
	// AttachShared attaches one program to all of ps; closing the result
	// detaches it from all of them. Where that takes one kernel object
	// per probe (fbt on kprobes, pid on uprobe perf events), it stops
	// when ctx is done, detaches what it attached and returns ctx's
	// error: an interrupted dtrace need not wait for thousands more.
	AttachShared(ctx context.Context, ps []*Probe, prog *ebpf.Program) (io.Closer, error)
}

// Identifier is implemented by Sharers whose shared programs learn which
// probe fired from the context instead of from the attach cookie: the
// syscall provider's dispatcher tail-calls one program for many system
// calls, which has no cookie of its own but has the system call number.
// The loader then looks the probe up by that value: the map of the
// shared program gives the probe id and its EPIDs by each of its
// Identities.
type Identifier interface {
	// Identify returns instructions, run after the Prologue of p's
	// shared program, that leave in R0 the value (a u32) telling which
	// of the probes sharing it fired. Like the Prologue they keep R6
	// and R7, may clobber R0-R5 and R8-R9, may jump to SkipLabel and
	// may also use the 8 bytes below the frame pointer.
	Identify(p *Probe, mstate int16) asm.Instructions
	// Identities are the values Identify leaves in R0 when p fires (a
	// syscall probe has one for native tasks and one for 32-bit ones);
	// probes with equal share keys have distinct identities.
	Identities(p *Probe) []uint32
}

// Fallbacker is implemented by providers that can run a probe another way
// when the kernel refuses its program (fbt: a kprobe where fentry is
// refused).
type Fallbacker interface {
	// Fallback switches the probe to its other way and reports whether
	// there was one; Program and Prologue then describe the new way.
	Fallback(p *Probe) bool
}

// HashMap describes a BPF hash map a provider's prologues use, named
// "dt_" and the provider's name and purpose: least recently used entries
// evicted when it is full, or with Grows a hash whose entries are
// allocated as they are added and never evicted (a table the provider
// fills when it attaches, which must not lose an entry).
type HashMap struct {
	Name                           string
	KeySize, ValueSize, MaxEntries uint32
	Grows                          bool
}

// TraceEventGroupPrefix begins the tracefs group of a dtrace process's
// dynamic trace events (TraceEvent), followed by its process id.
const TraceEventGroupPrefix = "dtrace_go_"

// CookieReader is implemented by Sharers whose shared programs do not
// always find the attach cookie with bpf_get_attach_cookie: pid probes on
// kernels without uprobe_multi put many sites on one perf event, which
// has one cookie, and look each site's cookie up by its address.
type CookieReader interface {
	// ReadCookie returns instructions that leave p's attach cookie in
	// R0, with the context in R6 (kept). They may clobber R1-R5 and the
	// 16 bytes from fp-24. Nil means bpf_get_attach_cookie.
	ReadCookie(p *Probe) asm.Instructions
}

// Mapper is implemented by providers whose prologues keep state in maps
// of their own (the io provider's wait probes remember, per thread, the
// block I/O it last submitted). The loader creates each map once per
// session, before the programs, and the prologues reference them by name
// (asm.LoadMapPtr(...).WithReference(name)).
type Mapper interface {
	Maps(p *Probe) []HashMap
}
