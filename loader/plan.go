package loader

import (
	"fmt"
	"sort"
	"sync"

	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/provider"
)

// Plan says which clauses run on which probe and with which EPID. It
// depends only on the Spec and the probe registry, so dtrace -S and the
// "matched N probes" count need nothing from the kernel.
type Plan struct {
	// Probes holds every matched probe, in probe id order.
	Probes []*ProbePlan
	// EPIDs lists every enabled probe (probe, clause) pair, by EPID.
	EPIDs []EPID
	// CPU is the one CPU on which probes are traced (dtrace's cpu
	// option), or -1 for every CPU.
	CPU int

	// mu guards Probes and EPIDs against Extend while tracing runs.
	mu sync.RWMutex
}

// ProbePlan is one probe and the clauses enabled on it.
type ProbePlan struct {
	Probe *provider.Probe
	// Clauses holds indexes into Spec.Clauses, in program order.
	Clauses []int
	// EPIDs holds the EPID of each clause on this probe.
	EPIDs []uint32
}

// EPID describes one enabled probe: the consumer finds the record layout
// by Clause and the probe by ProbeID.
type EPID struct {
	EPID    uint32
	ProbeID uint32
	Clause  int
}

// NoMatchError reports a clause probe description that matches no probe.
type NoMatchError struct {
	Desc provider.Desc
}

func (e *NoMatchError) Error() string {
	return fmt.Sprintf("probe description %s does not match any probes", e.Desc)
}

// PlanOptions tune NewPlan.
type PlanOptions struct {
	// ZeroMatches allows descriptions that match no probe (dtrace -Z).
	ZeroMatches bool
	// FirstEPID is the lowest EPID handed to a clause on its second and
	// later probes; 0 means one above the largest ClauseSpec.EPID.
	FirstEPID uint32
	// OneCPU restricts tracing to the CPU numbered CPU (dtrace's cpu
	// option): probes firing elsewhere return at once.
	OneCPU bool
	CPU    int
}

// NewPlan matches every clause's probe descriptions against the registry
// (creating probes on demand, tick-7ms) and lists, per probe, the clauses
// enabled on it in program order; a clause whose descriptions name one
// probe twice runs twice on it, as in dtrace (which makes a statement of
// each description). A clause keeps ClauseSpec.EPID on the
// first probe it is enabled on (lowest id) and gets a new EPID on each
// further probe, so an EPID always names one probe and one clause. The
// probe program stores the EPID in mstate.epid before calling the clause.
func NewPlan(spec *program.Spec, reg *provider.Registry, opts PlanOptions) (*Plan, error) {
	next := opts.FirstEPID
	for _, c := range spec.Clauses {
		if c.EPID >= next {
			next = c.EPID + 1
		}
	}
	if next == 0 {
		next = 1
	}
	byProbe := map[uint32]*ProbePlan{}
	for ci, c := range spec.Clauses {
		var probes []*provider.Probe
		for _, s := range c.Probes {
			d, err := provider.ParseDesc(s)
			if err != nil {
				return nil, err
			}
			ps, err := reg.Match(d)
			if err != nil {
				return nil, err
			}
			if len(ps) == 0 && !opts.ZeroMatches {
				return nil, &NoMatchError{Desc: d}
			}
			probes = append(probes, ps...)
		}
		sort.SliceStable(probes, func(i, j int) bool { return probes[i].ID < probes[j].ID })
		for i, p := range probes {
			epid := c.EPID
			if i > 0 || epid == 0 {
				epid = next
				next++
			}
			pp := byProbe[p.ID]
			if pp == nil {
				pp = &ProbePlan{Probe: p}
				byProbe[p.ID] = pp
			}
			pp.Clauses = append(pp.Clauses, ci)
			pp.EPIDs = append(pp.EPIDs, epid)
		}
	}
	plan := &Plan{CPU: -1}
	if opts.OneCPU {
		plan.CPU = opts.CPU
	}
	for _, pp := range byProbe {
		plan.Probes = append(plan.Probes, pp)
	}
	sort.Slice(plan.Probes, func(i, j int) bool { return plan.Probes[i].Probe.ID < plan.Probes[j].Probe.ID })
	for _, pp := range plan.Probes {
		for i, ci := range pp.Clauses {
			plan.EPIDs = append(plan.EPIDs, EPID{EPID: pp.EPIDs[i], ProbeID: pp.Probe.ID, Clause: ci})
		}
	}
	sort.Slice(plan.EPIDs, func(i, j int) bool { return plan.EPIDs[i].EPID < plan.EPIDs[j].EPID })
	return plan, nil
}

// EPID returns what an EPID stands for, or false.
func (p *Plan) EPID(epid uint32) (EPID, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	i := sort.Search(len(p.EPIDs), func(i int) bool { return p.EPIDs[i].EPID >= epid })
	if i < len(p.EPIDs) && p.EPIDs[i].EPID == epid {
		return p.EPIDs[i], true
	}
	return EPID{}, false
}

// Probe returns the plan for a probe id, or nil.
func (p *Plan) Probe(id uint32) *ProbePlan {
	p.mu.RLock()
	defer p.mu.RUnlock()
	i := sort.Search(len(p.Probes), func(i int) bool { return p.Probes[i].Probe.ID >= id })
	if i < len(p.Probes) && p.Probes[i].Probe.ID == id {
		return p.Probes[i]
	}
	return nil
}

// Symbols the loader itself puts into probe programs.
const (
	symHaveScratch = "dt_have_scratch"
	symDone        = "dt_probe_done"
	symShareSkip   = "dt_share_skip"
	symOnCPU       = "dt_on_cpu"
)

// Instructions builds the complete program of one planned probe: the
// common prologue (R6 = ctx, R7 = &dt_scratch[cpu]), the provider's
// prologue, the probe id and cleared fault/timestamp/speculation fields
// of mstate; then, for each enabled clause in program order, the activity
// check (when the Spec declares dt_state: skip the remaining clauses
// unless dt_state.activity is the one the probe runs in), the clause's
// EPID in mstate.epid and the call; then "r0 = 0; exit" (BEGIN and END
// first increment the activity), the SkipLabel exit if the prologue uses
// it, the clause functions and every Spec.Funcs entry they reach. Map
// references are left by name; Load resolves them.
func (p *Plan) Instructions(spec *program.Spec, pp *ProbePlan) (asm.Instructions, error) {
	return p.instructions(spec, pp, "", false)
}

// instructions is Instructions; with share set, the program serves every
// probe of a shared group (provider.Sharer) that runs pp's clauses: it
// finds the probe by its identity, the attach cookie or what the
// provider's Identify computes (provider.Identifier), and takes the probe
// id and each clause's EPID from the map named share (identity -> probe
// id, then one EPID per clause): a hash, or with dense an array indexed by
// the identity, whose slots of no probe hold probe id 0.
func (p *Plan) instructions(spec *program.Spec, pp *ProbePlan, share string, dense bool) (asm.Instructions, error) {
	insns, err := p.probeProgram(spec, pp, share, dense)
	if err != nil {
		return nil, err
	}
	return linkFunctions(spec, pp, insns)
}

// readCookie returns instructions that leave p's attach cookie in R0,
// the context being in R6: bpf_get_attach_cookie, unless the provider
// reads it another way (provider.CookieReader).
func readCookie(p *provider.Probe) asm.Instructions {
	if cr, ok := p.Owner.(provider.CookieReader); ok {
		if insns := cr.ReadCookie(p); insns != nil {
			return insns
		}
	}
	return asm.Instructions{asm.Mov.Reg(asm.R1, asm.R6), asm.FnGetAttachCookie.Call()}
}

// probeProgram is the part of instructions that is the probe's own code
// (dtrace-utils' trampoline): everything up to the exits, with the clause
// calls by name; linkFunctions appends what they call.
func (p *Plan) probeProgram(spec *program.Spec, pp *ProbePlan, share string, dense bool) (asm.Instructions, error) {
	if spec.Layout.MState > 0x7fff-abi.MStateSize {
		return nil, fmt.Errorf("mstate offset %d too large", spec.Layout.MState)
	}
	ms := int16(spec.Layout.MState)
	insns := ScratchPrologue(progSymbol(pp.Probe), symHaveScratch)
	if p.CPU >= 0 {
		// ScratchPrologue left this CPU's number at fp-4.
		insns = append(insns,
			asm.LoadMem(asm.R0, asm.RFP, -4, asm.Word),
			asm.JEq.Imm(asm.R0, int32(p.CPU), symOnCPU),
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
			asm.Mov.Imm(asm.R0, 0).WithSymbol(symOnCPU))
	}
	// errno is 0 unless the provider's prologue sets it.
	insns = append(insns, provider.StoreImmDW(asm.R7, ms+abi.MStateErrno, 0))
	// So is the caller the user stack walk misses (pid entry probes).
	insns = append(insns, provider.StoreImmDW(asm.R7, ms+abi.MStateUCaller, 0))
	if hasMap(spec, abi.MapFlowBio) {
		// The firing's flow is the thread's unless a block I/O transport
		// says otherwise (codegen/flow.go).
		insns = append(insns, provider.StoreImmDW(asm.R7, ms+abi.MStateFlowKey, 0))
	}
	ident, identify := pp.Probe.Owner.(provider.Identifier)
	identify = identify && share != ""
	if share != "" && !identify {
		// The cookie, read before the prologue (it needs the context
		// in R1), is the probe id.
		insns = append(insns, readCookie(pp.Probe)...)
		insns = append(insns, asm.StoreMem(asm.R7, ms+abi.MStatePrid, asm.R0, asm.Word))
	}
	var prologue asm.Instructions
	if s, ok := pp.Probe.Owner.(provider.ArgsSkipper); ok && !readsArgs(spec, pp) {
		prologue = s.PrologueNoArgs(pp.Probe, ms)
	} else {
		prologue = pp.Probe.Owner.Prologue(pp.Probe, ms)
	}
	insns = append(insns, prologue...)
	var identity asm.Instructions
	if identify {
		identity = ident.Identify(pp.Probe, ms)
		insns = append(insns, identity...)
	} else if share != "" {
		insns = append(insns, asm.LoadMem(asm.R0, asm.R7, ms+abi.MStatePrid, asm.Word))
	}
	if share != "" {
		// R9 = the probe's id and EPIDs; callee-saved like R8, and set
		// after the prologue, which may clobber both.
		insns = append(insns,
			asm.StoreMem(asm.RFP, -8, asm.R0, asm.Word),
			asm.LoadMapPtr(asm.R1, 0).WithReference(share),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -8),
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, symShareSkip),
			asm.Mov.Reg(asm.R9, asm.R0),
			asm.LoadMem(asm.R0, asm.R9, 0, asm.Word))
		if dense {
			// Probe ids start at 1: 0 is a slot of no probe.
			insns = append(insns, asm.JEq.Imm(asm.R0, 0, symShareSkip))
		}
		insns = append(insns, asm.StoreMem(asm.R7, ms+abi.MStatePrid, asm.R0, asm.Word))
	} else {
		insns = append(insns, asm.StoreImm(asm.R7, ms+abi.MStatePrid, int64(pp.Probe.ID), asm.Word))
	}
	insns = append(insns,
		provider.StoreImmDW(asm.R7, ms+abi.MStateFault, 0),
		provider.StoreImmDW(asm.R7, ms+abi.MStateIllval, 0),
		provider.StoreImmDW(asm.R7, ms+abi.MStateTimestamp, 0),
		provider.StoreImmDW(asm.R7, ms+abi.MStateSpecID, 0),
	)
	runsIn, advance := activity(pp.Probe)
	checked := hasMap(spec, abi.MapState)
	if checked {
		// R8 = &dt_state[0], by direct value access (no lookup: the
		// map is an array of one); callee-saved, so it survives the
		// clause calls.
		insns = append(insns, asm.LoadMapValue(asm.R8, 0, 0).WithReference(abi.MapState))
	}
	for i, ci := range pp.Clauses {
		c := spec.Clauses[ci]
		if checked {
			// Skip the remaining clauses once the activity moved on (an
			// exit() in an earlier clause of this firing).
			insns = append(insns,
				asm.LoadMem(asm.R0, asm.R8, abi.StateActivity, asm.Word),
				asm.JNE.Imm(asm.R0, int32(runsIn), symDone))
		}
		if share != "" {
			insns = append(insns,
				asm.LoadMem(asm.R0, asm.R9, int16(4+4*i), asm.Word),
				asm.StoreMem(asm.R7, ms+abi.MStateEPID, asm.R0, asm.Word))
		} else {
			insns = append(insns, asm.StoreImm(asm.R7, ms+abi.MStateEPID, int64(pp.EPIDs[i]), asm.Word))
		}
		// speculate() applies to the rest of its own clause only.
		insns = append(insns,
			provider.StoreImmDW(asm.R7, ms+abi.MStateSpecID, 0),
			asm.Mov.Reg(asm.R1, asm.R6),
			asm.Mov.Reg(asm.R2, asm.R7),
			asm.Call.Label(c.Symbol),
		)
	}
	done := asm.Mov.Imm(asm.R0, 0).WithSymbol(symDone)
	if checked && advance {
		insns = append(insns,
			asm.Mov.Imm(asm.R1, 1).WithSymbol(symDone),
			// StoreXAdd adds at offset 0, abi.StateActivity.
			asm.StoreXAdd(asm.R8, asm.R1, asm.Word))
		done = asm.Mov.Imm(asm.R0, 0)
	}
	insns = append(insns, done, asm.Return())
	if references(prologue, provider.SkipLabel) || references(identity, provider.SkipLabel) {
		// Only when used: the verifier refuses unreachable instructions.
		insns = append(insns, asm.Mov.Imm(asm.R0, 0).WithSymbol(provider.SkipLabel), asm.Return())
	}
	if share != "" {
		insns = append(insns, asm.Mov.Imm(asm.R0, 0).WithSymbol(symShareSkip), asm.Return())
	}
	return insns, nil
}

// linkFunctions appends to a probe program built by probeProgram the
// functions it calls: pp's clauses, then every Spec.Funcs entry (or
// clause, for dt_error) they reach, each once. The result is a new slice.
func linkFunctions(spec *program.Spec, pp *ProbePlan, insns asm.Instructions) (asm.Instructions, error) {
	insns = append(asm.Instructions(nil), insns...)
	funcs := map[string]asm.Instructions{}
	for _, f := range spec.Funcs {
		if len(f) > 0 {
			funcs[f[0].Symbol()] = f
		}
	}
	// Clauses are reachable as functions too: dt_error calls the ERROR
	// clauses from any probe's program.
	for _, c := range spec.Clauses {
		if len(c.Insns) > 0 {
			if _, ok := funcs[c.Symbol]; !ok {
				funcs[c.Symbol] = c.Insns
			}
		}
	}
	added := map[string]bool{}
	var queue []asm.Instructions
	for _, ci := range pp.Clauses {
		c := spec.Clauses[ci]
		if added[c.Symbol] {
			continue
		}
		if len(c.Insns) == 0 || c.Insns[0].Symbol() != c.Symbol {
			return nil, fmt.Errorf("clause %d: first instruction does not carry symbol %q", ci, c.Symbol)
		}
		added[c.Symbol] = true
		queue = append(queue, c.Insns)
	}
	for len(queue) > 0 {
		body := queue[0]
		queue = queue[1:]
		insns = append(insns, body...)
		for _, ins := range body {
			ref := ins.Reference()
			if ref == "" || added[ref] {
				continue
			}
			if f, ok := funcs[ref]; ok {
				added[ref] = true
				queue = append(queue, f)
			}
		}
	}
	// Clause bodies are shared between programs: give this one its own
	// slice so that map association cannot leak between them.
	return append(asm.Instructions(nil), insns...), nil
}

func progSymbol(p *provider.Probe) string {
	return fmt.Sprintf("dt_probe_%d", p.ID)
}

// activity tells in which activity a probe runs its clauses and whether it
// advances the activity afterwards: BEGIN runs while INACTIVE, END while
// DRAINING, both then increment it; everything else runs while ACTIVE.
func activity(p *provider.Probe) (runsIn uint32, advance bool) {
	if p.Provider == "dtrace" {
		switch p.Name {
		case "BEGIN":
			return abi.ActivityInactive, true
		case "END":
			return abi.ActivityDraining, true
		}
	}
	return abi.ActivityActive, false
}

func hasMap(spec *program.Spec, name string) bool {
	for _, m := range spec.Maps {
		if m.Name == name {
			return true
		}
	}
	return false
}

func references(insns asm.Instructions, sym string) bool {
	for _, ins := range insns {
		if ins.Reference() == sym {
			return true
		}
	}
	return false
}

// readsArgs tells whether any clause the probe runs reads its arguments.
// Probes sharing a program run the same clauses, so the answer holds for
// the whole group.
func readsArgs(spec *program.Spec, pp *ProbePlan) bool {
	for _, ci := range pp.Clauses {
		if spec.Clauses[ci].ReadsArgs {
			return true
		}
	}
	return false
}
