package loader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/provider"
)

// Options tune Load.
type Options struct {
	// VerifierLogSize is the starting size of the verifier log buffer;
	// 0 lets cilium/ebpf choose.
	VerifierLogSize uint32
	// VerifierLog, when set, gets the verifier's log of every program
	// it accepted (dtrace's bpflog option).
	VerifierLog func(p *provider.Probe, log string)
	// Listing, when set, gets each program at the stages of its making
	// that dtrace -S lists (dtrace-utils' -x disasm bits 2, 4 and 8),
	// with the probes it is loaded for (several for a shared program,
	// the first leading). It must not keep or change insns.
	Listing func(stage Stage, probes []*provider.Probe, insns asm.Instructions)
}

// Stage is a point in the making of a probe program.
type Stage int

const (
	// StageProgram is the probe's own code as built: prologue, the
	// mstate fields, a call per clause by name and the exits.
	StageProgram Stage = iota
	// StageLinked has the clause functions and the library functions
	// they reach appended, calls resolved within the program; map
	// loads still name their maps.
	StageLinked
	// StageFinal is what goes to cilium/ebpf to load: the linked program
	// with each map load carrying its map (Instruction.Map), whose file
	// descriptor the kernel receives.
	StageFinal
)

// Objects are the maps and programs of one D program in the kernel.
type Objects struct {
	spec  *program.Spec
	plan  *Plan
	maps  map[string]*ebpf.Map
	progs map[uint32]*loadedProg

	mu       sync.Mutex
	attach   []io.Closer
	closed   bool
	attached bool
	// exts are the probes added while tracing (Add), not yet removed.
	exts map[*Extension]bool
}

type loadedProg struct {
	pp    *ProbePlan
	kind  provider.ProgramKind
	prog  *ebpf.Program
	insns asm.Instructions
	// group holds the probes of a shared program (provider.Sharer), pp
	// first; nil for a program of one probe.
	group []*ProbePlan
}

// Load creates the Spec's maps and loads one program per planned probe.
// It attaches nothing: call Attach once the library is ready for probes to
// fire, and Run for test-run probes. On error everything created so far is
// closed.
func Load(spec *program.Spec, plan *Plan, opts Options) (_ *Objects, err error) {
	o := &Objects{spec: spec, plan: plan, maps: map[string]*ebpf.Map{}, progs: map[uint32]*loadedProg{}}
	defer func() {
		if err != nil {
			o.Close()
		}
	}()
	if err := o.createMaps(); err != nil {
		return nil, err
	}
	groups := shareGroups(plan)
	for _, pp := range plan.Probes {
		if g := groups[pp]; g != nil {
			if g[0] == pp {
				if err := o.loadShared(g, opts); err != nil {
					return nil, err
				}
			}
			continue
		}
		if err := o.loadProbe(pp, opts); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// shareGroups gathers the probes that can run one program: those whose
// provider gives them equal share keys and that run the same clauses. It
// maps each member to its group (in plan order).
func shareGroups(plan *Plan) map[*ProbePlan][]*ProbePlan {
	type key struct {
		owner   provider.Provider
		share   string
		clauses string
	}
	byKey := map[key][]*ProbePlan{}
	var keys []key
	for _, pp := range plan.Probes {
		s, ok := pp.Probe.Owner.(provider.Sharer)
		if !ok {
			continue
		}
		k := key{owner: pp.Probe.Owner, share: s.ShareKey(pp.Probe)}
		if k.share == "" {
			continue
		}
		k.clauses = fmt.Sprint(pp.Clauses)
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], pp)
	}
	groups := map[*ProbePlan][]*ProbePlan{}
	for _, k := range keys {
		for _, pp := range byKey[k] {
			groups[pp] = byKey[k]
		}
	}
	return groups
}

// loadShared loads one program for a group of probes sharing it, with the
// map that gives each probe's id and EPIDs by its identity: its id (the
// attach cookie), or what its provider's Identity says.
func (o *Objects) loadShared(g []*ProbePlan, opts Options) error {
	pp := g[0]
	name := shareMapName(pp)
	ident, identify := pp.Probe.Owner.(provider.Identifier)
	// A probe has one key, or as many as it has identities, each with
	// the same value.
	var keys []uint32
	var of []*ProbePlan
	for _, q := range g {
		ks := []uint32{q.Probe.ID}
		if identify {
			ks = ident.Identities(q.Probe)
		}
		for _, k := range ks {
			keys = append(keys, k)
			of = append(of, q)
		}
	}
	dense := shareDense(keys)
	ms := &ebpf.MapSpec{Name: kernelName(name), Type: ebpf.Hash, KeySize: 4,
		ValueSize: uint32(4 * (1 + len(pp.Clauses))), MaxEntries: uint32(len(keys))}
	if dense {
		ms.Type, ms.MaxEntries = ebpf.Array, slices.Max(keys)+1
	}
	m, err := ebpf.NewMap(ms)
	if err != nil {
		return fmt.Errorf("failed to enable '%s': create map %s: %w", pp.Probe, name, err)
	}
	o.maps[name] = m
	vals := make([]byte, 0, len(keys)*int(m.ValueSize()))
	for _, q := range of {
		vals = binary.NativeEndian.AppendUint32(vals, q.Probe.ID)
		for _, e := range q.EPIDs {
			vals = binary.NativeEndian.AppendUint32(vals, e)
		}
	}
	if _, err := m.BatchUpdate(keys, vals, nil); err != nil {
		// Batch operations arrived in 5.6; one at a time otherwise.
		vs := int(m.ValueSize())
		for i, k := range keys {
			if err := m.Put(k, vals[i*vs:(i+1)*vs]); err != nil {
				return fmt.Errorf("failed to enable '%s': fill map %s: %w", pp.Probe, name, err)
			}
		}
	}
	insns, err := o.build(g, name, dense, opts)
	if err != nil {
		return fmt.Errorf("failed to enable '%s': %w", pp.Probe, err)
	}
	lp, err := o.loadInsns(g, insns, opts)
	if err != nil {
		return err
	}
	lp.group = g
	for _, q := range g {
		o.progs[q.Probe.ID] = lp
	}
	return nil
}

// shareMapName names the map of the shared program whose group pp leads.
func shareMapName(pp *ProbePlan) string { return fmt.Sprintf("dt_share_%d", pp.Probe.ID) }

// shareDense reports whether a shared program's identities are small
// enough to index an array rather than key a hash: the verifier turns an
// array lookup into a few inline instructions, where a hash lookup is a
// helper call that hashes the key, on every firing (the system call
// numbers of a wide syscall description, for one). The bound keeps the
// array within a few times the group's size, or 4,096 slots.
func shareDense(keys []uint32) bool {
	if len(keys) == 0 {
		return false
	}
	return slices.Max(keys) < max(4096, 4*uint32(len(keys)))
}

// build makes the program of g's probes (g[0]'s alone unless share
// names the map of a shared program), giving opts.Listing its stages.
func (o *Objects) build(g []*ProbePlan, share string, dense bool, opts Options) (asm.Instructions, error) {
	pp := g[0]
	if opts.Listing == nil {
		return o.plan.instructions(o.spec, pp, share, dense)
	}
	insns, err := o.plan.probeProgram(o.spec, pp, share, dense)
	if err != nil {
		return nil, err
	}
	probes := make([]*provider.Probe, len(g))
	for i, q := range g {
		probes[i] = q.Probe
	}
	opts.Listing(StageProgram, probes, insns)
	if insns, err = linkFunctions(o.spec, pp, insns); err != nil {
		return nil, err
	}
	opts.Listing(StageLinked, probes, insns)
	return insns, nil
}

func (o *Objects) loadProbe(pp *ProbePlan, opts Options) error {
	g := []*ProbePlan{pp}
	insns, err := o.build(g, "", false, opts)
	if err != nil {
		return fmt.Errorf("failed to enable '%s': %w", pp.Probe, err)
	}
	lp, err := o.loadInsns(g, insns, opts)
	if err != nil {
		var ve *VerifierError
		fb, ok := pp.Probe.Owner.(provider.Fallbacker)
		if !ok || !errors.As(err, &ve) || ve.Feature != nil || !fb.Fallback(pp.Probe) {
			return err
		}
		// The kernel refused the program (an fentry program on a
		// function the verifier will not trace): the probe's other way.
		if insns, err = o.build(g, "", false, opts); err != nil {
			return fmt.Errorf("failed to enable '%s': %w", pp.Probe, err)
		}
		if lp, err = o.loadInsns(g, insns, opts); err != nil {
			return err
		}
	}
	o.progs[pp.Probe.ID] = lp
	return nil
}

// loadInsns resolves a program's maps and loads it for the probes of g
// (g[0]'s alone unless it is shared).
func (o *Objects) loadInsns(g []*ProbePlan, insns asm.Instructions, opts Options) (*loadedProg, error) {
	pp := g[0]
	var mapRefs map[int]string
	if opts.Listing != nil {
		// AssociateMap replaces a load's map name with the map; the
		// listing names it still.
		mapRefs = map[int]string{}
		for i, ins := range insns {
			if ins.IsLoadFromMap() && ins.Reference() != "" {
				mapRefs[i] = ins.Reference()
			}
		}
	}
	for name, m := range o.maps {
		if err := insns.AssociateMap(name, m); err != nil && !errors.Is(err, asm.ErrUnreferencedSymbol) {
			return nil, fmt.Errorf("probe %s: map %s: %w", pp.Probe, name, err)
		}
	}
	for _, ins := range insns {
		if ins.IsLoadFromMap() && ins.Map() == nil && ins.Reference() != "" {
			return nil, fmt.Errorf("probe %s: reference to undeclared map %s", pp.Probe, ins.Reference())
		}
	}
	if err := checkISA(pp.Probe, insns); err != nil {
		return nil, err
	}
	if opts.Listing != nil {
		shown := append(asm.Instructions(nil), insns...)
		for i, name := range mapRefs {
			shown[i] = shown[i].WithReference(name)
		}
		probes := make([]*provider.Probe, len(g))
		for i, q := range g {
			probes[i] = q.Probe
		}
		opts.Listing(StageFinal, probes, shown)
	}
	funcInfo := annotateFunctions(insns)
	kind := pp.Probe.Owner.Program(pp.Probe)
	ps := &ebpf.ProgramSpec{
		Name:         kernelName(fmt.Sprintf("dt_%d", pp.Probe.ID)),
		Type:         kind.Type,
		AttachType:   kind.AttachType,
		AttachTo:     kind.AttachTo,
		Instructions: insns,
		License:      "GPL",
	}
	po := ebpf.ProgramOptions{LogSizeStart: opts.VerifierLogSize}
	if opts.VerifierLog != nil {
		po.LogLevel = ebpf.LogLevelInstruction | ebpf.LogLevelStats
	}
	if !funcInfo && opts.VerifierLog == nil {
		// The D source annotations only serve the verifier's log; as
		// BTF line info they cost a BTF object per program (and, on
		// the first, cilium/ebpf's probes of the kernel's BTF support:
		// seven more loads). A program the kernel refuses is loaded
		// again with them, for the log.
		ps.Instructions = withoutSources(insns)
	}
	prog, err := ebpf.NewProgramWithOptions(ps, po)
	if err != nil && len(ps.Instructions) > 0 && &ps.Instructions[0] != &insns[0] {
		ps.Instructions = insns
		prog, err = ebpf.NewProgramWithOptions(ps, po)
	}
	if err != nil {
		return nil, newVerifierError(pp.Probe, insns, err)
	}
	if opts.VerifierLog != nil {
		opts.VerifierLog(pp.Probe, prog.VerifierLog)
	}
	return &loadedProg{pp: pp, kind: kind, prog: prog, insns: insns}, nil
}

// Attach attaches every program whose probe is not test-run only. Calling
// it again does nothing.
func (o *Objects) Attach() error { return o.AttachContext(context.Background()) }

// AttachContext is Attach that stops when ctx is done (between probes,
// and inside a provider that attaches a shared program one kernel object
// at a time) and returns ctx's error. What it attached stays attached
// until Close, as after any failed Attach.
func (o *Objects) AttachContext(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return errors.New("loader: objects closed")
	}
	if o.attached {
		return nil
	}
	o.attached = true
	return o.attachProbes(ctx, o.plan.Probes, &o.attach)
}

// attachProbes attaches the programs of pps, adding what detaches them to
// *cs as it goes, until ctx is done.
func (o *Objects) attachProbes(ctx context.Context, pps []*ProbePlan, cs *[]io.Closer) error {
	for _, pp := range pps {
		if err := ctx.Err(); err != nil {
			return err
		}
		lp := o.progs[pp.Probe.ID]
		if lp.kind.TestRun {
			continue
		}
		if lp.group != nil {
			if lp.pp != pp {
				continue
			}
			ps := make([]*provider.Probe, len(lp.group))
			for i, q := range lp.group {
				ps[i] = q.Probe
			}
			c, err := pp.Probe.Owner.(provider.Sharer).AttachShared(ctx, ps, lp.prog)
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				return err
			}
			if err != nil {
				return attachError(pp.Probe, err)
			}
			*cs = append(*cs, c)
			continue
		}
		c, err := pp.Probe.Owner.Attach(pp.Probe, lp.prog)
		if err != nil {
			return attachError(pp.Probe, err)
		}
		if c != nil {
			*cs = append(*cs, c)
		}
	}
	return nil
}

// Run fires a test-run probe (BEGIN, END, ERROR) in this process with
// BPF_PROG_TEST_RUN, on the plan's CPU if it has one; args become
// arg0..arg9 (missing ones are 0). A probe without enabled clauses is not
// an error: it has nothing to run.
func (o *Objects) Run(probeID uint32, args []uint64) error {
	// Probes fire on the plan's one CPU only, if it has one: BEGIN and
	// END run there.
	return o.RunOn(probeID, o.plan.CPU, args)
}

// RunOn is Run on a given CPU (BPF_F_TEST_RUN_ON_CPU); cpu < 0 runs on
// the CPU the calling thread is on.
func (o *Objects) RunOn(probeID uint32, cpu int, args []uint64) error {
	lp := o.progs[probeID]
	if lp == nil {
		return nil
	}
	if !lp.kind.TestRun {
		return fmt.Errorf("probe %s is not a test-run probe", lp.pp.Probe)
	}
	var ctx [abi.MStateNArgs]uint64
	copy(ctx[:], args)
	ro := &ebpf.RunOptions{Context: ctx[:]}
	if cpu >= 0 {
		ro.CPU, ro.Flags = uint32(cpu), testRunOnCPU
	}
	if _, err := lp.prog.Run(ro); err != nil {
		return fmt.Errorf("run %s: %w", lp.pp.Probe, err)
	}
	return nil
}

// testRunOnCPU is BPF_F_TEST_RUN_ON_CPU.
const testRunOnCPU = 1

// Has reports whether the probe has a program (has enabled clauses).
func (o *Objects) Has(probeID uint32) bool { return o.progs[probeID] != nil }

// Map returns the map with the given Spec name, or nil.
func (o *Objects) Map(name string) *ebpf.Map { return o.maps[name] }

// Program returns the loaded program of a probe, or nil.
func (o *Objects) Program(probeID uint32) *ebpf.Program {
	if lp := o.progs[probeID]; lp != nil {
		return lp.prog
	}
	return nil
}

// Instructions returns the final instruction listing of a probe's program
// (for dtrace -S), or nil.
func (o *Objects) Instructions(probeID uint32) asm.Instructions {
	if lp := o.progs[probeID]; lp != nil {
		return lp.insns
	}
	return nil
}

// Plan returns the plan the objects were loaded from.
func (o *Objects) Plan() *Plan { return o.plan }

// Close detaches every probe, then closes programs and maps.
func (o *Objects) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.closed = true
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	attach := o.attach
	for e := range o.exts {
		attach = append(attach, e.attach...)
	}
	keep(detachAll(attach))
	for id, lp := range o.progs {
		if lp.group == nil || lp.pp.Probe.ID == id {
			keep(lp.prog.Close())
		}
	}
	for _, m := range o.maps {
		keep(m.Close())
	}
	return first
}

// detachAll closes the closers at once: detaching a uprobe waits for an
// RCU grace period, and so the waits overlap. It returns the first error.
func detachAll(cs []io.Closer) error {
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = cs[i].Close()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
