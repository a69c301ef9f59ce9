package dtrace

// -x otlp: the OpenTelemetry exporter (package output/otlp) beside the
// output: spans of the probes -x otlpspans names, aggregations as
// metrics.

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/otlp"
	"github.com/dtrace-go/dtrace/provider"
)

// addOTLPOptions adds -x otlp, otlpprotocol and otlpspans.
func addOTLPOptions() {
	ct := CompileTime
	// -x otlp=URL; "-x otlp" alone takes the endpoint from
	// OTEL_EXPORTER_OTLP_ENDPOINT and friends.
	addOpt(&OptionSpec{Name: "otlp", Kind: KindAny, Class: ct,
		set: func(o *Options, v optValue) error {
			if v.Str != "" && otlp.CheckURL(v.Str) != nil {
				return ErrBadOptVal
			}
			o.OTLP, o.OTLPOn = v.Str, true
			return nil
		}})
	addOpt(&OptionSpec{Name: "otlpprotocol", Kind: KindEnum, Class: ct, Enum: []string{otlp.ProtoGRPC, otlp.ProtoHTTP},
		set: stringField(func(o *Options) *string { return &o.OTLPProtocol })})
	addOpt(&OptionSpec{Name: "otlpspans", Kind: KindString, Class: ct,
		set: checkedString(checkSpanDescs, func(o *Options) *string { return &o.OTLPSpans })})
}

// checkSpanDescs checks -x otlpspans: probe descriptions separated by
// commas.
func checkSpanDescs(s string) error {
	_, err := spanDescs(s)
	return err
}

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

// otlpSpans reports whether the program exports spans.
func (o *Options) otlpSpans() bool { return o.OTLPOn && o.OTLPSpans != "" }

// checkOTLP resolves the endpoints as the exporter will, so that a bad
// environment stops dtrace at start-up.
func (o *Options) checkOTLP() error {
	if !o.OTLPOn {
		return nil
	}
	e, err := otlp.New(otlp.Config{URL: o.OTLP, Protocol: o.OTLPProtocol})
	if err != nil {
		return fmt.Errorf("-x otlp: %v", err)
	}
	e.Close(nil, nil, 0)
	return nil
}

// startOTLP starts the exporter, when -x otlp asks for it.
func (h *Handle) startOTLP() error {
	if !h.opts.OTLPOn {
		return nil
	}
	var match func(output.Probe) bool
	if h.opts.OTLPSpans != "" {
		descs, err := spanDescs(h.opts.OTLPSpans)
		if err != nil {
			return err
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
	if h.opts.PromLabels != "" {
		labels = strings.Split(h.opts.PromLabels, ",")
	}
	var uts unix.Utsname
	_ = unix.Uname(&uts)
	exp, err := otlp.New(otlp.Config{URL: h.opts.OTLP, Protocol: h.opts.OTLPProtocol, Spans: match, Labels: labels,
		Settings: h.settings(), Sym: h.sym, Target: h.conf.Target, Names: h.ThreadNames,
		Version: version(), Kernel: unix.ByteSliceToString(uts.Release[:]), Interval: h.rate("aggrate")})
	if err != nil {
		return fmt.Errorf("failed to export -x otlp=%s: %v", h.opts.OTLP, err)
	}
	h.otlp = exp
	if match != nil {
		h.out = &teeRenderer{printer: h.out, also: exp.Renderer()}
	}
	return nil
}

// version is dtrace's version as the build records it.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return "dtrace-go " + bi.Main.Version
	}
	return "dtrace-go"
}

// exportMetrics exports the aggregations when an interval has passed.
func (h *Handle) exportMetrics() error {
	if h.otlp == nil || !h.otlp.Due() {
		return nil
	}
	aggs, err := h.cons.FinalAggregations()
	if err != nil {
		return err
	}
	h.otlp.Metrics(aggs, nil)
	return nil
}

// closeOTLP exports the spans left and the final aggregations, gives
// the queue a few seconds, and reports what was dropped.
func (h *Handle) closeOTLP(aggs []*aggregate.Agg, merged bool) {
	if h.otlp == nil {
		return
	}
	var machines []string
	if merged {
		machines = []string{"host"}
		for _, g := range h.opts.Guests {
			name, _, _ := strings.Cut(g, "=")
			machines = append(machines, name)
		}
	}
	dropped, _, lastErr := h.otlp.Close(aggs, machines, 5*time.Second)
	h.otlp = nil
	if dropped > 0 {
		stderr := h.conf.Stderr
		if stderr == nil {
			stderr = os.Stderr
		}
		msg := fmt.Sprintf("dtrace: %d OTLP record%s dropped", dropped, plural(dropped))
		if lastErr != "" {
			msg += " (" + lastErr + ")"
		}
		fmt.Fprintln(stderr, msg)
	}
}

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// teeRenderer hands the records to the output's renderer and to the
// exporter's.
type teeRenderer struct {
	printer
	also output.Renderer
}

func (t *teeRenderer) Begin(r *output.Record) error {
	if err := t.printer.Begin(r); err != nil {
		return err
	}
	return t.also.Begin(r)
}

func (t *teeRenderer) Item(r *output.Record, it *output.Item) error {
	if err := t.printer.Item(r, it); err != nil {
		return err
	}
	return t.also.Item(r, it)
}

func (t *teeRenderer) End(r *output.Record) error {
	if err := t.printer.End(r); err != nil {
		return err
	}
	return t.also.End(r)
}

func (t *teeRenderer) Flush() error {
	if err := t.printer.Flush(); err != nil {
		return err
	}
	return t.also.Flush()
}

// Output is where system() commands print: the output renderer's.
func (t *teeRenderer) Output() io.Writer {
	if o, ok := t.printer.(output.Outputter); ok {
		return o.Output()
	}
	return os.Stdout
}

// baseOut is the output's renderer, without the exporter's beside it.
func (h *Handle) baseOut() printer {
	if t, ok := h.out.(*teeRenderer); ok {
		return t.printer
	}
	return h.out
}
