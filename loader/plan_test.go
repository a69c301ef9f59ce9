package loader

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/codegen"
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
		var cs []*codegen.ClauseSpec
		for i, ps := range tt.probes {
			cs = append(cs, &codegen.ClauseSpec{Probes: ps, Insns: asm.Instructions{asm.Return().WithSymbol(fmt.Sprintf("dt_clause_%d", i))}})
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
		&codegen.ClauseSpec{Probes: []string{"BEGIN", "tick-1s"}, EPID: 1, Insns: emitClause("dt_clause_0")},
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
