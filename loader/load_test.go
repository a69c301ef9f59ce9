package loader

import (
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/perf"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/dtrace"
	"github.com/dtrace-go/dtrace/provider/profile"
)

const (
	testOutput = 256 // Layout.Output in the test specs
	recSize    = 32  // epid, specid, prid(u64), arg0, arg1
)

// emitClause is a hand-written clause following the contract: it builds
// {epid, specid, prid, arg0, arg1} at Layout.Output from mstate and sends
// it to dt_buf. extra runs first (with R7 = scratch, R6 = ctx).
func emitClause(sym string, extra ...asm.Instruction) asm.Instructions {
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1).WithSymbol(sym),
		asm.Mov.Reg(asm.R7, asm.R2),
	}
	insns = append(insns, extra...)
	return append(insns,
		asm.LoadMem(asm.R0, asm.R7, abi.MStateEPID, asm.Word),
		asm.StoreMem(asm.R7, testOutput, asm.R0, asm.Word),
		asm.StoreImm(asm.R7, testOutput+4, 0, asm.Word),
		asm.LoadMem(asm.R0, asm.R7, abi.MStatePrid, asm.Word),
		asm.StoreMem(asm.R7, testOutput+8, asm.R0, asm.DWord),
		asm.LoadMem(asm.R0, asm.R7, 0, asm.DWord),
		asm.StoreMem(asm.R7, testOutput+16, asm.R0, asm.DWord),
		asm.LoadMem(asm.R0, asm.R7, 8, asm.DWord),
		asm.StoreMem(asm.R7, testOutput+24, asm.R0, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.LoadMapPtr(asm.R2, 0).WithReference(abi.MapBuf),
		asm.LoadImm(asm.R3, 0xffffffff, asm.DWord),
		asm.Mov.Reg(asm.R4, asm.R7),
		asm.Add.Imm(asm.R4, testOutput),
		asm.Mov.Imm(asm.R5, recSize),
		asm.FnPerfEventOutput.Call(),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	)
}

// exitClause sets dt_state.activity to DRAINING, as exit() does.
func exitClause(sym string) asm.Instructions {
	return asm.Instructions{
		asm.StoreImm(asm.RFP, -4, 0, asm.Word).WithSymbol(sym),
		asm.LoadMapPtr(asm.R1, 0).WithReference(abi.MapState),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, sym+"_out"),
		asm.StoreImm(asm.R0, 0, abi.ActivityDraining, asm.Word),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(sym + "_out"),
		asm.Return(),
	}
}

func testSpec(clauses ...*program.ClauseSpec) *program.Spec {
	for i, c := range clauses {
		c.Index = i
		c.Symbol = c.Insns[0].Symbol()
	}
	return &program.Spec{
		Maps: []program.MapSpec{
			{Name: abi.MapBuf, Kind: program.MapPerfEventArray},
			{Name: abi.MapScratch, Kind: program.MapArray, KeySize: 4, ValueSize: 512},
			{Name: abi.MapState, Kind: program.MapArray, KeySize: 4, ValueSize: 8, MaxEntries: 1},
		},
		Clauses: clauses,
		Layout:  program.ScratchLayout{Size: 512, MState: 0, Output: testOutput},
	}
}

func newRegistry() *provider.Registry {
	return provider.NewRegistry(dtrace.New(), profile.New())
}

type record struct {
	cpu        int
	epid, prid uint32
	arg0, arg1 uint64
}

// load plans spec with newRegistry's providers, loads it and opens a
// reader of its buffers; the objects are closed when the test ends.
func load(t *testing.T, spec *program.Spec) (*Objects, *perf.Reader) {
	t.Helper()
	o, _ := loadPlan(t, spec, newRegistry())
	return o, reader(t, o)
}

// loadPlan plans spec with the providers of reg and loads it, logging the
// verifier's complaints; the objects are closed when the test ends.
func loadPlan(t *testing.T, spec *program.Spec, reg *provider.Registry) (*Objects, *Plan) {
	t.Helper()
	plan, err := NewPlan(spec, reg, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o, err := Load(spec, plan, Options{})
	if err != nil {
		var ve *VerifierError
		if errors.As(err, &ve) {
			t.Logf("verifier log:\n%s", strings.Join(ve.Log, "\n"))
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o, plan
}

func reader(t *testing.T, o *Objects) *perf.Reader {
	t.Helper()
	rd, err := perf.NewReader(o.Map(abi.MapBuf), 4*os.Getpagesize())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	return rd
}

// readAll returns the records available within d.
func readAll(t *testing.T, rd *perf.Reader, d time.Duration) []record {
	t.Helper()
	var out []record
	end := time.Now().Add(d)
	for {
		rd.SetDeadline(end)
		r, err := rd.Read()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(r.RawSample) < recSize {
			continue
		}
		s := r.RawSample
		out = append(out, record{
			cpu:  r.CPU,
			epid: binary.LittleEndian.Uint32(s), prid: uint32(binary.LittleEndian.Uint64(s[8:])),
			arg0: binary.LittleEndian.Uint64(s[16:]), arg1: binary.LittleEndian.Uint64(s[24:]),
		})
	}
}

func activityOf(t *testing.T, o *Objects) uint32 {
	t.Helper()
	var v [8]byte
	if err := o.Map(abi.MapState).Lookup(uint32(0), &v); err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint32(v[:])
}

func setActivity(t *testing.T, o *Objects, a uint32) {
	t.Helper()
	var v [8]byte
	binary.LittleEndian.PutUint32(v[:], a)
	if err := o.Map(abi.MapState).Put(uint32(0), v); err != nil {
		t.Fatal(err)
	}
}

func TestBeginEndRun(t *testing.T) {
	spec := testSpec(
		&program.ClauseSpec{Probes: []string{"BEGIN"}, EPID: 1, Insns: emitClause("dt_clause_0")},
		&program.ClauseSpec{Probes: []string{"dtrace:::BEGIN", "END"}, EPID: 2, Insns: emitClause("dt_clause_1")},
	)
	o, rd := load(t, spec)
	if err := o.Attach(); err != nil {
		t.Fatal(err)
	}
	ncpu, _ := ebpf.PossibleCPU()
	if err := o.RunOn(1, ncpu-1, []uint64{7, 8}); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, rd, 200*time.Millisecond)
	if len(got) > 0 && got[0].cpu != ncpu-1 {
		t.Errorf("BEGIN ran on CPU %d, want %d", got[0].cpu, ncpu-1)
	}
	want := []record{{epid: 1, prid: 1, arg0: 7, arg1: 8}, {epid: 2, prid: 1, arg0: 7, arg1: 8}}
	if len(got) != 2 || got[0].epid != want[0].epid || got[1].epid != want[1].epid ||
		got[0].prid != 1 || got[1].arg0 != 7 || got[1].arg1 != 8 {
		t.Fatalf("BEGIN records = %+v, want %+v", got, want)
	}
	if a := activityOf(t, o); a != abi.ActivityActive {
		t.Fatalf("activity after BEGIN = %d, want ACTIVE", a)
	}
	// END runs only while DRAINING.
	if err := o.Run(2, nil); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, rd, 50*time.Millisecond); len(got) != 0 {
		t.Fatalf("END ran while ACTIVE: %+v", got)
	}
	setActivity(t, o, abi.ActivityDraining)
	if err := o.Run(2, nil); err != nil {
		t.Fatal(err)
	}
	got = readAll(t, rd, 200*time.Millisecond)
	// Clause 1 on its second probe gets a fresh EPID.
	if len(got) != 1 || got[0].prid != 2 || got[0].epid != 3 {
		t.Fatalf("END records = %+v, want one with prid 2, epid 3", got)
	}
	if a := activityOf(t, o); a != abi.ActivityStopped {
		t.Fatalf("activity after END = %d, want STOPPED", a)
	}
	wantEPIDs := []EPID{{1, 1, 0}, {2, 1, 1}, {3, 2, 1}}
	if e := o.Plan().EPIDs; len(e) != 3 || e[0] != wantEPIDs[0] || e[1] != wantEPIDs[1] || e[2] != wantEPIDs[2] {
		t.Fatalf("EPIDs = %+v, want %+v", e, wantEPIDs)
	}
	if e, ok := o.Plan().EPID(3); !ok || e.ProbeID != 2 || e.Clause != 1 {
		t.Fatalf("EPID(3) = %+v, %v", e, ok)
	}
	if _, ok := o.Plan().EPID(9); ok {
		t.Fatal("EPID(9) found")
	}
	if err := o.Run(3, nil); err != nil { // ERROR has no clauses: nothing to do
		t.Fatal(err)
	}
}

func TestExitSkipsLaterClauses(t *testing.T) {
	spec := testSpec(
		&program.ClauseSpec{Probes: []string{"BEGIN"}, EPID: 1, Insns: emitClause("dt_clause_0")},
		&program.ClauseSpec{Probes: []string{"BEGIN"}, Insns: exitClause("dt_clause_1")},
		&program.ClauseSpec{Probes: []string{"BEGIN"}, EPID: 2, Insns: emitClause("dt_clause_2")},
	)
	o, rd := load(t, spec)
	if err := o.Run(1, nil); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, rd, 200*time.Millisecond)
	if len(got) != 1 || got[0].epid != 1 {
		t.Fatalf("records = %+v, want only EPID 1", got)
	}
	if a := activityOf(t, o); a != abi.ActivityStopped {
		t.Fatalf("activity = %d, want STOPPED after exit in BEGIN", a)
	}
}

func TestProfileAndTick(t *testing.T) {
	spec := testSpec(
		&program.ClauseSpec{Probes: []string{"BEGIN"}, EPID: 1, Insns: emitClause("dt_clause_0")},
		&program.ClauseSpec{Probes: []string{"tick-1ms"}, EPID: 2, Insns: emitClause("dt_clause_1")},
		&program.ClauseSpec{Probes: []string{"profile-997"}, EPID: 3, Insns: emitClause("dt_clause_2")},
	)
	o, rd := load(t, spec)
	if err := o.Attach(); err != nil {
		t.Fatal(err)
	}
	// Nothing fires before BEGIN made the activity ACTIVE.
	if got := readAll(t, rd, 30*time.Millisecond); len(got) != 0 {
		t.Fatalf("records before BEGIN: %+v", got)
	}
	if err := o.Run(1, nil); err != nil {
		t.Fatal(err)
	}
	// Keep every CPU busy part of the time so profile probes see user pcs too.
	var stop atomic.Bool
	defer stop.Store(true)
	for i := 0; i < 2; i++ {
		go func() {
			for !stop.Load() {
			}
		}()
	}
	got := readAll(t, rd, 300*time.Millisecond)
	tick, prof := 0, map[int]int{}
	var tickPrid uint32
	for _, r := range got {
		switch r.epid {
		case 2:
			tick++
			tickPrid = r.prid
		case 3:
			prof[r.cpu]++
		default:
			continue
		}
		if (r.arg0 == 0) == (r.arg1 == 0) {
			t.Errorf("record %+v: exactly one of arg0 (kernel pc) and arg1 (user pc) must be set", r)
		}
	}
	ncpu, _ := ebpf.PossibleCPU()
	if tick < 10 || len(prof) != ncpu {
		t.Fatalf("tick fired %d times, profile on CPUs %v (want all %d)", tick, prof, ncpu)
	}
	p := o.Plan().Probe(tickPrid)
	if p == nil || p.Probe.Name != "tick-1ms" {
		t.Fatalf("tick record prid %d is not tick-1ms", tickPrid)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	readAll(t, rd, 20*time.Millisecond)
	if got := readAll(t, rd, 50*time.Millisecond); len(got) != 0 {
		t.Fatalf("%d records after Close", len(got))
	}
}

func TestSharedFuncsAndListing(t *testing.T) {
	helper := asm.Instructions{
		asm.Mov.Imm(asm.R0, 0).WithSymbol("dt_helper"),
		asm.Return().WithSource(pos("x.d:3:1")), // line info with subprograms must load

	}
	unused := asm.Instructions{
		asm.Mov.Imm(asm.R0, 0).WithSymbol("dt_unused"),
		asm.Return(),
	}
	spec := testSpec(&program.ClauseSpec{Probes: []string{"BEGIN"}, EPID: 1,
		Insns: emitClause("dt_clause_0", asm.Call.Label("dt_helper"))})
	spec.Funcs = []asm.Instructions{unused, helper}
	// With the verifier's log asked for, the line info goes to the
	// kernel (without it, the annotations are left out).
	plan, err := NewPlan(spec, newRegistry(), PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	logged := false
	withLines, err := Load(spec, plan, Options{VerifierLog: func(*provider.Probe, string) { logged = true }})
	if err != nil {
		t.Fatalf("with line info: %v", err)
	}
	withLines.Close()
	if !logged {
		t.Error("no verifier log")
	}
	o, rd := load(t, spec)
	if err := o.Run(1, nil); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, rd, 100*time.Millisecond); len(got) != 1 {
		t.Fatalf("records = %+v", got)
	}
	listing := o.Instructions(1).String()
	for _, want := range []string{"dt_probe_1:", "dt_clause_0:", "dt_helper:"} {
		if !strings.Contains(listing, want) {
			t.Errorf("listing lacks %q:\n%s", want, listing)
		}
	}
	if strings.Contains(listing, "dt_unused") {
		t.Errorf("listing has an unreferenced function:\n%s", listing)
	}
}

type pos string

func (p pos) String() string { return string(p) }

func TestVerifierError(t *testing.T) {
	bad := asm.Instructions{
		asm.Mov.Imm(asm.R0, 0).WithSymbol("dt_clause_0").WithSource(pos("x.d:1:1")),
		asm.LoadMem(asm.R0, asm.R3, 0, asm.DWord).WithSource(pos("x.d:2:9")), // R3 is not readable here
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	}
	spec := testSpec(&program.ClauseSpec{Probes: []string{"BEGIN"}, Insns: bad})
	plan, err := NewPlan(spec, newRegistry(), PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o, err := Load(spec, plan, Options{})
	if err == nil {
		o.Close()
		t.Fatal("bad program loaded")
	}
	var ve *VerifierError
	if !errors.As(err, &ve) {
		t.Fatalf("error %T %v is not a VerifierError", err, err)
	}
	if len(ve.Log) == 0 || ve.Source != "x.d:2:9" || ve.Probe.Name != "BEGIN" {
		t.Fatalf("VerifierError source %q probe %v, log:\n%s", ve.Source, ve.Probe, strings.Join(ve.Log, "\n"))
	}
	if !strings.Contains(err.Error(), "x.d:2:9") {
		t.Errorf("message %q lacks the source position", err)
	}
	// Programs load without their source annotations (no BTF line
	// info); the one refused is loaded again with them, so the kernel's
	// log still has its line info (its first: the function's name).
	if log := strings.Join(ve.Log, "\n"); !strings.Contains(log, "; dt_probe_1") {
		t.Errorf("verifier log without the source line:\n%s", log)
	}
}

func TestPlanNoMatch(t *testing.T) {
	spec := testSpec(&program.ClauseSpec{Probes: []string{"nosuch:::probe"}, Insns: emitClause("dt_clause_0")})
	_, err := NewPlan(spec, newRegistry(), PlanOptions{})
	var nm *NoMatchError
	if !errors.As(err, &nm) || err.Error() != "probe description nosuch:::probe does not match any probes" {
		t.Fatalf("err = %v", err)
	}
	plan, err := NewPlan(spec, newRegistry(), PlanOptions{ZeroMatches: true})
	if err != nil || len(plan.Probes) != 0 {
		t.Fatalf("with ZeroMatches: %v, %v", plan, err)
	}
}

// refusing is dtrace's provider whose programs the kernel refuses until
// Fallback switches them back, as fbt's fentry programs may be.
type refusing struct {
	*dtrace.Provider
	fellBack bool
}

func (r *refusing) Program(p *provider.Probe) provider.ProgramKind {
	if !r.fellBack {
		return provider.ProgramKind{Type: ebpf.Tracing, AttachType: ebpf.AttachTraceFEntry, AttachTo: "dt_no_such_function"}
	}
	return r.Provider.Program(p)
}

func (r *refusing) Fallback(*provider.Probe) bool {
	was := r.fellBack
	r.fellBack = true
	return !was
}

func TestFallback(t *testing.T) {
	spec := testSpec(&program.ClauseSpec{Probes: []string{"BEGIN"}, EPID: 1, Insns: emitClause("dt_clause_0")})
	pv := &refusing{Provider: dtrace.New()}
	o, _ := loadPlan(t, spec, provider.NewRegistry(pv))
	if !pv.fellBack {
		t.Fatal("the refused program loaded without a fallback")
	}
	rd := reader(t, o)
	if err := o.Run(1, nil); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, rd, 100*time.Millisecond); len(got) != 1 {
		t.Fatalf("records = %+v", got)
	}
}
