package perfetto

import (
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/jsonrec"
)

// Format is -x oformat=perfetto: a trace-event timeline from
// kernel-stamped records, one JSON object that -o writes anew; it takes
// the events of guests too.
var Format = output.Format{
	Name: "perfetto", Option: "oformat", When: output.Streaming, Stamps: true, Truncate: true, Guests: true,
	New: func(e output.Env) (output.Renderer, error) {
		return New(Config{Stderr: e.Stderr, Config: jsonrec.Config{Settings: e.Settings, Sym: e.Sym, Target: e.Target},
			Names: e.Names, Text: e.Text}), nil
	},
}
