package flamegraph

import (
	"io"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/output"
)

// Format is -x flamegraph=FILE: the stack aggregations, at exit, as an
// SVG flame graph.
var Format = output.AtExitFormat("flamegraph", func(w io.Writer, aggs []*aggregate.Agg, e output.Env) error {
	return Write(w, aggs, e.Sym, e.Settings.AggSort, "dtrace flame graph")
})
