package folded

import "github.com/dtrace-go/dtrace/output"

// Format is -x oformat=folded: aggregations as collapsed stacks, records
// as dtrace(1M) text.
var Format = output.Format{
	Name: "folded", Option: "oformat", When: output.Streaming,
	New: func(e output.Env) (output.Renderer, error) {
		return New(e.Text(nil), e.Sym, e.Settings.AggSort), nil
	},
}
