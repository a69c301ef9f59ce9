package flamegraph

import (
	"io"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/output"
)

// Format is -x flamegraph=FILE: the stack aggregations, at exit, as an
// SVG flame graph.
var Format = output.Format{
	Name: "flamegraph", Option: "flamegraph", When: output.AtExit,
	New: func(e output.Env) (output.Renderer, error) { return &atExit{env: e}, nil },
}

// atExit writes the graph when it gets the final aggregations.
type atExit struct {
	output.Nop
	env output.Env
}

func (r *atExit) Aggregations(aggs []*aggregate.Agg) error {
	return output.WriteFile(r.env.Dest, func(w io.Writer) error {
		return Write(w, aggs, r.env.Sym, r.env.Settings.AggSort, "dtrace flame graph")
	})
}
