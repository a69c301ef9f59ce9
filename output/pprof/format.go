package pprof

import (
	"io"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/output"
)

// Format is -x pprof=FILE: the stack aggregations, at exit, as a pprof
// profile.
var Format = output.AtExitFormat("pprof", func(w io.Writer, aggs []*aggregate.Agg, e output.Env) error {
	return Write(w, aggs, e.Sym, e.Settings.AggSort)
})
