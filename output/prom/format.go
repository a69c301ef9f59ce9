package prom

import (
	"fmt"
	"strings"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/output"
)

// Format is -x prometheus=ADDR: /metrics served while tracing, the
// keys' labels named by -x promlabels; an address other than loopback
// needs the web configuration (TLS, basic auth) -x promwebconfig names.
var Format = output.Format{
	Name: "prometheus", Option: "prometheus", When: output.Serving, Params: []string{"promlabels", "promwebconfig"},
	Check: func(option, value string) error {
		switch option {
		case "promlabels":
			return CheckLabels(value)
		case "promwebconfig":
			return CheckWebConfig(value)
		}
		return CheckAddr(value)
	},
	Verify: func(dest string, param func(string) string) error { return Exposure(dest, param("promwebconfig")) },
	New: func(e output.Env) (output.Renderer, error) {
		var labels []string
		if l := e.Param("promlabels"); l != "" {
			labels = strings.Split(l, ",")
		}
		s, err := StartConfig(Config{Addr: e.Dest, WebConfig: e.Param("promwebconfig"), Labels: labels, Sym: e.Sym})
		if err != nil {
			return nil, fmt.Errorf("failed to serve -x prometheus=%s: %v", e.Dest, err)
		}
		return &serving{s: s}, nil
	},
}

// serving is the Server the facade drives: it sees no records.
type serving struct {
	output.Nop
	s *Server
}

func (r *serving) Serve(read func() ([]*aggregate.Agg, error)) error { return r.s.Serve(read) }

// Stop stops serving: once tracing is over the final values are
// printed, not served.
func (r *serving) Stop([]*aggregate.Agg, []string) error { return r.s.Close() }
