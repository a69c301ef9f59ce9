//go:build linux

package dtrace

import (
	"testing"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/loader"
	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/provider"
)

// TestRecordBound checks the bound that sizes the kernel rings of
// programs whose probes fire a known number of times: every segment of
// every BEGIN and END clause once, a fault record each, and the ERROR
// clauses once per fault of theirs; and no bound once another probe is
// enabled.
func TestRecordBound(t *testing.T) {
	seg := func(sizes ...uint32) []*program.RecordSpec {
		var out []*program.RecordSpec
		for _, s := range sizes {
			out = append(out, &program.RecordSpec{Size: s})
		}
		return out
	}
	spec := &program.Spec{Clauses: []*program.ClauseSpec{
		{Segments: seg(16, 40)}, // BEGIN: trace(); printf() after an if
		{Segments: seg(24)},     // END
		{Segments: seg(32)},     // ERROR
		{Segments: seg(16)},     // tick-1s
	}}
	probe := func(id uint32, clauses ...int) *loader.ProbePlan {
		return &loader.ProbePlan{Probe: &provider.Probe{ID: id}, Clauses: clauses}
	}
	fault := perfRecordSize(abi.FaultRecordSize) // 8 + 4+56 padded to 64 = 72
	if fault != 72 {
		t.Fatalf("fault record takes %d bytes in a ring, want 72", fault)
	}
	begin := (8 + 24) + (8 + 48) + fault // 16+4 -> 24, 40+4 -> 48
	end := (8 + 32) + fault
	onError := (8 + 40) + fault
	for _, tc := range []struct {
		name   string
		probes []*loader.ProbePlan
		want   int
	}{
		{"BEGIN", []*loader.ProbePlan{probe(abi.ProbeBegin, 0)}, begin},
		{"BEGIN twice and END", []*loader.ProbePlan{probe(abi.ProbeBegin, 0, 0), probe(abi.ProbeEnd, 1)}, 2*begin + end},
		{"with ERROR", []*loader.ProbePlan{probe(abi.ProbeBegin, 0), probe(abi.ProbeEnd, 1), probe(abi.ProbeError, 2)}, begin + end + 2*onError},
		{"with tick", []*loader.ProbePlan{probe(abi.ProbeBegin, 0), probe(9, 3)}, 0},
	} {
		if got := recordBound(spec, &loader.Plan{Probes: tc.probes}); got != tc.want {
			t.Errorf("%s: bound %d bytes, want %d", tc.name, got, tc.want)
		}
	}
}
