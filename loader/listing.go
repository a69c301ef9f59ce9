package loader

import (
	"fmt"
	"io"

	"github.com/dtrace-go/dtrace/program"
)

// WriteListing writes, for dtrace -S, every planned probe's final program:
// a header line naming the probe, then the instructions with their labels
// and source annotations as cilium/ebpf's asm prints them. It needs no
// kernel objects.
func WriteListing(w io.Writer, spec *program.Spec, plan *Plan) error {
	for _, pp := range plan.Probes {
		insns, err := plan.Instructions(spec, pp)
		if err != nil {
			return err
		}
		kind := pp.Probe.Owner.Program(pp.Probe)
		how := "attached"
		if kind.TestRun {
			how = "test run"
		}
		if _, err := fmt.Fprintf(w, "\nProbe %d %s (%v, %s, %d instructions):\n%v", pp.Probe.ID, pp.Probe, kind.Type, how, len(insns), insns); err != nil {
			return err
		}
	}
	return nil
}
