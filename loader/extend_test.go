package loader

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/provider"
)

// TestExtend adds probes to a running program: their EPIDs come after all
// others, a clause named twice on a probe runs twice, the new programs
// fire, and closing the extension detaches them while the rest runs on.
func TestExtend(t *testing.T) {
	spec := testSpec(
		&program.ClauseSpec{Probes: []string{"BEGIN"}, EPID: 1, Insns: emitClause("dt_clause_0")},
		&program.ClauseSpec{Probes: []string{"tick-1s", "BEGIN"}, EPID: 2, Insns: emitClause("dt_clause_1")},
	)
	reg := newRegistry()
	plan, err := NewPlan(spec, reg, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to load programs")
	}
	o, err := Load(spec, plan, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	rd := reader(t, o)
	if err := o.Attach(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(1, nil); err != nil {
		t.Fatal(err)
	}
	readAll(t, rd, 10*time.Millisecond)
	top := plan.EPIDs[len(plan.EPIDs)-1].EPID
	tick, err := reg.MatchString("tick-2ms")
	if err != nil || len(tick) != 1 {
		t.Fatal(tick, err)
	}
	pps := plan.Extend(spec, [][]*provider.Probe{tick, {tick[0], tick[0]}})
	if len(pps) != 1 || fmt.Sprint(pps[0].Clauses) != "[0 1 1]" {
		t.Fatalf("Extend = %+v", pps)
	}
	for i, e := range pps[0].EPIDs {
		ep, ok := plan.EPID(e)
		if e != top+1+uint32(i) || !ok || ep.ProbeID != tick[0].ID || ep.Clause != pps[0].Clauses[i] {
			t.Errorf("EPID %d: %+v %v, want %d", e, ep, ok, top+1+uint32(i))
		}
	}
	if plan.Probe(tick[0].ID) != pps[0] {
		t.Error("the plan does not hold the new probe")
	}
	e, err := o.Add(pps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Program(tick[0].ID) == nil {
		t.Fatal("no program for the added probe")
	}
	fired := map[uint32]int{}
	for _, r := range readAll(t, rd, 300*time.Millisecond) {
		fired[r.epid]++
	}
	for _, ep := range pps[0].EPIDs {
		if fired[ep] == 0 {
			t.Errorf("EPID %d did not fire: %v", ep, fired)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if o.Program(tick[0].ID) != nil {
		t.Error("the closed extension's program is still there")
	}
	readAll(t, rd, 10*time.Millisecond)
	for _, r := range readAll(t, rd, 50*time.Millisecond) {
		if r.epid > top {
			t.Errorf("record of the closed extension: %+v", r)
		}
	}
	if _, err := o.Add(pps[:0], Options{}); err != nil {
		t.Errorf("empty Add: %v", err)
	}
}
