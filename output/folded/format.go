package folded

import (
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/text"
)

// Format is -x oformat=folded: aggregations as collapsed stacks, records
// as dtrace(1M) text.
var Format = output.Format{
	Name: "folded", Option: "oformat", When: output.Streaming,
	New: func(e output.Env) (output.Renderer, error) {
		return New(text.Config{Stderr: e.Stderr, Testing: e.Testing, Settings: e.Settings, Sym: e.Sym, Target: e.Target}), nil
	},
}
