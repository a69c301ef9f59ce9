package dtrace

// The output formats other than the streaming one (-x pprof, -x
// flamegraph, -x prometheus, -x otlp), as the registry in output/formats
// describes them.

import (
	"io"
	"os"
	"runtime/debug"

	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/formats"
)

// outputsOn returns the formats other than the streaming one whose
// option is set, in registry order.
func (o *Options) outputsOn() []*output.Format {
	var out []*output.Format
	for _, f := range formats.All() {
		if _, on := o.Outputs[f.Option]; on && f.When != output.Streaming {
			out = append(out, f)
		}
	}
	return out
}

// outputParam gives the value of an output format's option.
func (o *Options) outputParam(name string) string { return o.Outputs[name] }

// recordFormats returns the formats that take the records: the
// streaming one and those beside it that ask for them.
func (o *Options) recordFormats() []*output.Format {
	var out []*output.Format
	if f := formats.Streaming(o.OFormat); f != nil {
		out = append(out, f)
	}
	for _, f := range o.outputsOn() {
		if f.Records != nil && f.Records(o.outputParam) {
			out = append(out, f)
		}
	}
	return out
}

// stamps reports whether records need kernel stamps (the firing thread
// and time) for a format that takes them.
func (o *Options) stamps() bool {
	for _, f := range o.recordFormats() {
		if f.Stamps {
			return true
		}
	}
	return false
}

// flows reports whether records must carry the firing thread's flowid
// for a format that takes them.
func (o *Options) flows() bool {
	for _, f := range o.recordFormats() {
		if f.Flows {
			return true
		}
	}
	return false
}

// version is dtrace's version as the build records it.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return "dtrace-go " + bi.Main.Version
	}
	return "dtrace-go"
}

// teeRenderer hands the records to the output's renderer and to a
// renderer beside it (-x otlp's spans).
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

// baseOut is the output's renderer, without those beside it.
func (h *Handle) baseOut() printer {
	out := h.out
	for {
		t, ok := out.(*teeRenderer)
		if !ok {
			return out
		}
		out = t.printer
	}
}
