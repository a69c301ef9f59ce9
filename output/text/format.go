package text

import "github.com/dtrace-go/dtrace/output"

// Format is dtrace(1M)'s text, the default output (-x oformat=text).
var Format = output.Format{
	Name: "text", Option: "oformat", When: output.Streaming, Guests: true,
	New: func(e output.Env) (output.Renderer, error) {
		return New(Config{Stderr: e.Stderr, Testing: e.Testing, Settings: e.Settings, Sym: e.Sym, Target: e.Target}), nil
	},
}
