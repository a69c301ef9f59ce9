package otlp

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/provider"
)

// Format is -x otlp=URL ("-x otlp" alone: the endpoint from
// OTEL_EXPORTER_OTLP_ENDPOINT and friends): the aggregations exported
// as metrics every aggrate and at exit, and the records of the probes
// -x otlpspans names as spans; -x otlpprotocol chooses grpc or
// http/protobuf, and the keys' attributes take -x promlabels' names.
var Format = output.Format{
	Name: "otlp", Option: "otlp", When: output.Serving, Bare: true, Stamps: true, Flows: true,
	Params: []string{"otlpprotocol", "otlpspans"},
	Check: func(option, value string) error {
		switch option {
		case "otlpprotocol":
			return CheckProtocol(value)
		case "otlpspans":
			_, err := spanDescs(value)
			return err
		}
		if value == "" {
			return nil
		}
		return CheckURL(value)
	},
	// The endpoints resolve as the exporter's will, so that a bad
	// environment stops dtrace at start-up.
	Verify: func(dest string, param func(string) string) error {
		e, err := New(Config{URL: dest, Protocol: param("otlpprotocol")})
		if err != nil {
			return err
		}
		e.Close(nil, nil, 0)
		return nil
	},
	Records: func(param func(string) string) bool { return param("otlpspans") != "" },
	New:     newFormat,
}

func newFormat(env output.Env) (output.Renderer, error) {
	var match func(output.Probe) bool
	if s := env.Param("otlpspans"); s != "" {
		descs, err := spanDescs(s)
		if err != nil {
			return nil, err
		}
		match = func(p output.Probe) bool {
			pp := &provider.Probe{Provider: p.Provider, Module: p.Module, Function: p.Function, Name: p.Name}
			for _, d := range descs {
				if d.Matches(pp) {
					return true
				}
			}
			return false
		}
	}
	var labels []string
	if l := env.Param("promlabels"); l != "" {
		labels = strings.Split(l, ",")
	}
	exp, err := New(Config{URL: env.Dest, Protocol: env.Param("otlpprotocol"), Spans: match, Labels: labels,
		Settings: env.Settings, Sym: env.Sym, Target: env.Target, Names: env.Names,
		Version: env.Version, Kernel: env.Kernel, Interval: env.Settings.AggRate})
	if err != nil {
		return nil, fmt.Errorf("failed to export -x otlp=%s: %v", env.Dest, err)
	}
	return &exporting{Renderer: exp.Renderer(), e: exp, env: env}, nil
}

// spanDescs parses -x otlpspans: probe descriptions separated by
// commas.
func spanDescs(s string) ([]provider.Desc, error) {
	var out []provider.Desc
	for _, d := range strings.Split(s, ",") {
		d = strings.TrimSpace(d)
		if d == "" {
			return nil, fmt.Errorf("empty probe description")
		}
		desc, err := provider.ParseDesc(d)
		if err != nil {
			return nil, err
		}
		out = append(out, desc)
	}
	return out, nil
}

// exporting is the Server the facade drives: the records go to the
// span renderer, the aggregations to the metrics.
type exporting struct {
	output.Renderer
	e   *Exporter
	env output.Env
}

// Serve exports the aggregations when an interval has passed.
func (r *exporting) Serve(read func() ([]*aggregate.Agg, error)) error {
	if !r.e.Due() {
		return nil
	}
	aggs, err := read()
	if err != nil {
		return err
	}
	r.e.Metrics(aggs, nil)
	return nil
}

// Stop exports the spans left and the final aggregations, gives the
// queue a few seconds, and reports what was dropped.
func (r *exporting) Stop(final []*aggregate.Agg, machines []string) error {
	dropped, _, lastErr := r.e.Close(final, machines, 5*time.Second)
	if dropped > 0 {
		stderr := r.env.Stderr
		if stderr == nil {
			stderr = os.Stderr
		}
		msg := fmt.Sprintf("dtrace: %d OTLP record%s dropped", dropped, plural(dropped))
		if lastErr != "" {
			msg += " (" + lastErr + ")"
		}
		fmt.Fprintln(stderr, msg)
	}
	return nil
}

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}
