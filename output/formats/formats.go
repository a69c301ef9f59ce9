// Package formats is the registry of output formats: every format the
// options can select, in one list. The option parser, the library facade
// and the command ask it; a new format is its own package (declaring an
// output.Format) and one line here.
package formats

import (
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/flamegraph"
	"github.com/dtrace-go/dtrace/output/folded"
	"github.com/dtrace-go/dtrace/output/json"
	"github.com/dtrace-go/dtrace/output/otlp"
	"github.com/dtrace-go/dtrace/output/perfetto"
	"github.com/dtrace-go/dtrace/output/pprof"
	"github.com/dtrace-go/dtrace/output/prom"
	"github.com/dtrace-go/dtrace/output/text"
)

// all lists the formats; AtExit formats write in this order.
var all = []*output.Format{
	&text.Format,
	&json.Format,
	&folded.Format,
	&perfetto.Format,
	&pprof.Format,
	&flamegraph.Format,
	&prom.Format,
	&otlp.Format,
}

// All returns every format, in registry order.
func All() []*output.Format { return all }

// Streaming returns the format -x oformat=name selects, or nil.
func Streaming(name string) *output.Format {
	for _, f := range all {
		if f.When == output.Streaming && f.Name == name {
			return f
		}
	}
	return nil
}

// Names returns the names -x oformat takes.
func Names() []string {
	var out []string
	for _, f := range all {
		if f.When == output.Streaming {
			out = append(out, f.Name)
		}
	}
	return out
}
