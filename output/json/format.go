package json

import "github.com/dtrace-go/dtrace/output"

// Format is -x oformat=json: JSON Lines, each record stamped with the
// kernel's time and the firing thread.
var Format = output.Format{
	Name: "json", Option: "oformat", When: output.Streaming, Stamps: true,
	New: func(e output.Env) (output.Renderer, error) {
		return New(Config{Stderr: e.Stderr, Settings: e.Settings, Sym: e.Sym, Target: e.Target}), nil
	},
}
