package loader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/dtrace"
	"github.com/dtrace-go/dtrace/provider/profile"
)

func TestPlan(t *testing.T) {
	tests := []struct {
		probes [][]string // per clause
		want   string     // probe:clauses ...
	}{
		{[][]string{{"BEGIN"}, {"END"}, {"BEGIN"}}, "1:[0 2] 2:[1]"},
		// A probe named three times runs the clause three times, as in dtrace.
		{[][]string{{"BEGIN", "dtrace:::BEGIN", ":::BEGIN"}}, "1:[0 0 0]"},
		{[][]string{{"dtrace:::*"}}, "1:[0] 2:[0] 3:[0]"},
		{[][]string{{"tick-1sec"}, {"BEGIN", "tick-1sec"}}, "1:[1] 17:[0 1]"},
		{[][]string{{"profile-97", "tick-1"}}, "4:[0] 11:[0]"},
	}
	for _, tt := range tests {
		var cs []*program.ClauseSpec
		for i, ps := range tt.probes {
			cs = append(cs, &program.ClauseSpec{Probes: ps, Insns: asm.Instructions{asm.Return().WithSymbol(fmt.Sprintf("dt_clause_%d", i))}})
		}
		plan, err := NewPlan(testSpec(cs...), newRegistry(), PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, pp := range plan.Probes {
			got = append(got, fmt.Sprintf("%d:%v", pp.Probe.ID, pp.Clauses))
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("%v: plan %s, want %s", tt.probes, g, tt.want)
		}
	}
}

func TestWriteListing(t *testing.T) {
	spec := testSpec(
		&program.ClauseSpec{Probes: []string{"BEGIN", "tick-1s"}, EPID: 1, Insns: emitClause("dt_clause_0")},
	)
	plan, err := NewPlan(spec, newRegistry(), PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteListing(&b, spec, plan); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Probe 1 dtrace:::BEGIN (RawTracepoint, test run,",
		"Probe 17 profile:::tick-1s (PerfEvent, attached,",
		"dt_probe_17:", "dt_clause_0:", "LoadMapPtr dst: r1 fd: 0 <dt_scratch>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
}

// sharing makes profile's tick probes share programs, as fbt's wide
// probes do.
type sharing struct{ *profile.Provider }

func (sharing) ShareKey(p *provider.Probe) string {
	if strings.HasPrefix(p.Name, "tick-") {
		return "tick"
	}
	return ""
}

func (sharing) AttachShared(context.Context, []*provider.Probe, *ebpf.Program) (io.Closer, error) {
	return nil, errors.New("not attached in this test")
}

func TestShareGroups(t *testing.T) {
	spec := testSpec(
		&program.ClauseSpec{Probes: []string{"tick-1s", "tick-2s", "profile-97"}, EPID: 1, Insns: emitClause("dt_clause_0")},
		&program.ClauseSpec{Probes: []string{"tick-3s"}, EPID: 2, Insns: emitClause("dt_clause_1")},
	)
	reg := provider.NewRegistry(dtrace.New(), sharing{profile.New()})
	plan, err := NewPlan(spec, reg, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	groups := shareGroups(plan)
	var got []string
	for _, pp := range plan.Probes {
		var ids []string
		for _, q := range groups[pp] {
			ids = append(ids, q.Probe.Name)
		}
		got = append(got, pp.Probe.Name+":"+strings.Join(ids, ","))
	}
	// tick-3s runs other clauses: a group of its own; profile-97 is
	// not shared.
	want := "profile-97: tick-1s:tick-1s,tick-2s tick-2s:tick-1s,tick-2s tick-3s:tick-3s"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("groups %s, want %s", g, want)
	}
	insns := sharedTick1s(t, spec, plan)
	listing := fmt.Sprint(insns)
	for _, want := range []string{"GetAttachCookie", "<dt_share_x>", "dt_share_skip"} {
		if !strings.Contains(listing, want) {
			t.Errorf("shared program lacks %q:\n%s", want, listing)
		}
	}
	for _, ins := range insns {
		if ins.OpCode.Class() == asm.StClass && ins.Offset == abi.MStateEPID {
			t.Errorf("shared program stores a constant EPID: %v", ins)
		}
	}
}

// sharedTick1s builds the program tick-1s shares, with the map named
// dt_share_x.
func sharedTick1s(t *testing.T, spec *program.Spec, plan *Plan) asm.Instructions {
	t.Helper()
	for _, pp := range plan.Probes {
		if pp.Probe.Name == "tick-1s" {
			insns, err := plan.instructions(spec, pp, "dt_share_x", false)
			if err != nil {
				t.Fatal(err)
			}
			return insns
		}
	}
	t.Fatal("no tick-1s in the plan")
	return nil
}

// identifying is sharing whose shared programs find the probe by what
// Identify computes (as the syscall provider's do), not by the cookie.
type identifying struct{ sharing }

func (identifying) Identify(*provider.Probe, int16) asm.Instructions {
	return asm.Instructions{asm.Mov.Imm(asm.R0, 4242)}
}

func (identifying) Identities(p *provider.Probe) []uint32 { return []uint32{p.ID + 1000} }

func TestShareIdentify(t *testing.T) {
	spec := testSpec(&program.ClauseSpec{Probes: []string{"tick-1s", "tick-2s"}, EPID: 1, Insns: emitClause("dt_clause_0")})
	reg := provider.NewRegistry(dtrace.New(), identifying{sharing{profile.New()}})
	plan, err := NewPlan(spec, reg, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	insns := sharedTick1s(t, spec, plan)
	listing := fmt.Sprint(insns)
	if strings.Contains(listing, "GetAttachCookie") || !strings.Contains(listing, "MovImm dst: r0 imm: 4242") || !strings.Contains(listing, "<dt_share_x>") {
		t.Errorf("shared program does not look its probe up by Identify's value:\n%s", listing)
	}
	// The probe id comes from the map (R9), never as a constant.
	for _, ins := range insns {
		if ins.OpCode.Class() == asm.StClass && (ins.Offset == abi.MStatePrid || ins.Offset == abi.MStateEPID) {
			t.Errorf("shared program stores a constant probe id or EPID: %v", ins)
		}
	}
}

// filterProvider has one test-run probe whose prologue skips firings with
// arg0 == 0, as a provider sharing a tracepoint between probes would.
type filterProvider struct{}

func (filterProvider) Name() string { return "filter" }
func (filterProvider) Probes(d provider.Desc) ([]*provider.Probe, error) {
	if d.MatchesIn("", "", "odd") {
		return []*provider.Probe{{Name: "odd"}}, nil
	}
	return nil, nil
}
func (filterProvider) Program(*provider.Probe) provider.ProgramKind {
	return provider.ProgramKind{Type: ebpf.RawTracepoint, TestRun: true}
}
func (filterProvider) Prologue(_ *provider.Probe, ms int16) asm.Instructions {
	return append(provider.CopyArgs(0, 2, ms),
		asm.LoadMem(asm.R0, asm.R7, ms, asm.DWord),
		asm.JEq.Imm(asm.R0, 0, provider.SkipLabel))
}
func (filterProvider) Attach(*provider.Probe, *ebpf.Program) (io.Closer, error) { return nil, nil }

func TestPrologueSkip(t *testing.T) {
	spec := testSpec(&program.ClauseSpec{Probes: []string{"filter:::odd"}, EPID: 1, Insns: emitClause("dt_clause_0")})
	o, plan := loadPlan(t, spec, provider.NewRegistry(dtrace.New(), filterProvider{}))
	rd := reader(t, o)
	setActivity(t, o, abi.ActivityActive)
	id := plan.Probes[0].Probe.ID
	for _, a := range []uint64{0, 5, 0, 7} {
		if err := o.Run(id, []uint64{a}); err != nil {
			t.Fatal(err)
		}
	}
	got := readAll(t, rd, 100*time.Millisecond)
	if len(got) != 2 || got[0].arg0 != 5 || got[1].arg0 != 7 {
		t.Fatalf("records %+v, want arg0 5 and 7 only", got)
	}
}

// TestShareDense: small identities (system call numbers) index an array,
// whose empty slots (probe id 0) the program skips; sparse ones key a hash.
func TestShareDense(t *testing.T) {
	for _, c := range []struct {
		keys []uint32
		want bool
	}{
		{nil, false},
		{[]uint32{0, 1, 59, 435}, true},
		{[]uint32{4095}, true},
		{[]uint32{4096}, false},
		{[]uint32{70000, 70001}, false},
	} {
		if got := shareDense(c.keys); got != c.want {
			t.Errorf("shareDense(%v) = %v, want %v", c.keys, got, c.want)
		}
	}
	spec := testSpec(&program.ClauseSpec{Probes: []string{"tick-1s", "tick-2s"}, EPID: 1, Insns: emitClause("dt_clause_0")})
	plan, err := NewPlan(spec, provider.NewRegistry(dtrace.New(), sharing{profile.New()}), PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	skips := func(dense bool) int {
		var pp *ProbePlan
		for _, q := range plan.Probes {
			if q.Probe.Name == "tick-1s" {
				pp = q
			}
		}
		insns, err := plan.instructions(spec, pp, "dt_share_x", dense)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ins := range insns {
			if ins.OpCode.JumpOp() == asm.JEq && ins.Reference() == symShareSkip {
				n++
			}
		}
		return n
	}
	// The hash's lookup can miss; the array's slot can be empty too.
	if h, a := skips(false), skips(true); h != 1 || a != 2 {
		t.Errorf("jumps to %s: hash %d (want 1), array %d (want 2)", symShareSkip, h, a)
	}
}

// cancelling shares profile's tick probes as sharing does, and cancels
// the attach's context once the first group is attached: AttachContext
// must attach no other.
type cancelling struct {
	sharing
	cancel context.CancelFunc
	groups *[]string
}

func (c *cancelling) AttachShared(_ context.Context, ps []*provider.Probe, _ *ebpf.Program) (io.Closer, error) {
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	*c.groups = append(*c.groups, strings.Join(names, ","))
	c.cancel()
	return provider.Closers(), nil
}

func TestAttachInterrupted(t *testing.T) {
	spec := testSpec(
		&program.ClauseSpec{Probes: []string{"tick-1s", "tick-2s"}, EPID: 1, Insns: emitClause("dt_clause_0")},
		&program.ClauseSpec{Probes: []string{"tick-3s", "tick-4s"}, EPID: 2, Insns: emitClause("dt_clause_1")},
	)
	ctx, cancel := context.WithCancel(context.Background())
	var groups []string
	o, _ := loadPlan(t, spec, provider.NewRegistry(dtrace.New(), &cancelling{sharing{profile.New()}, cancel, &groups}))
	if err := o.AttachContext(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("AttachContext = %v, want %v", err, context.Canceled)
	}
	if len(groups) != 1 {
		t.Errorf("attached groups %q after the context ended, want the first alone", groups)
	}
}
