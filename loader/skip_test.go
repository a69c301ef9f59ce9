package loader

import (
	"io"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/codegen"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/dtrace"
)

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
	spec := testSpec(&codegen.ClauseSpec{Probes: []string{"filter:::odd"}, EPID: 1, Insns: emitClause("dt_clause_0")})
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
