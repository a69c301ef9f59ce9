package output

import (
	"fmt"
	"io"
	"os"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
)

// When says when an output format writes.
type When int

// The ways a format writes.
const (
	// Streaming formats render records as the consumer decodes them:
	// one is selected by -x oformat and writes where dtrace(1M)'s text
	// would.
	Streaming When = iota
	// AtExit formats write the final aggregations once, at exit, to the
	// file their option names (-x pprof=FILE).
	AtExit
	// Serving formats work while tracing: they serve the aggregations
	// (-x prometheus=ADDR) or export them (-x otlp=URL), and may take
	// the records too; their renderer is also a Server.
	Serving
)

// Format is one output format as the option parser, the library facade
// and the command see it: its name, how it is selected, what it needs
// from the kernel and its destination, and its constructor. Each
// renderer package declares its Format; package output/formats lists
// them all.
type Format struct {
	// Name is the format's name: the value of -x oformat for a
	// Streaming format, else its option's name.
	Name string
	// Option is the -x option that selects it: "oformat" for
	// Streaming formats; for the others the option whose value is the
	// destination (a file, an address), which is the format's Name.
	Option string
	// Bare is set when the option may be given without a value (-x
	// otlp: the destination then comes from the environment).
	Bare bool
	// When says when it writes.
	When When
	// Stamps is set when its records need kernel stamps (the firing
	// thread and CLOCK_MONOTONIC time of each record).
	Stamps bool
	// Records, for a format that is not Streaming, reports whether its
	// renderer takes the records too, beside the streaming format's,
	// with the format's options as param gives them (-x otlp does when
	// -x otlpspans names probes); nil: it takes none. Stamps and Flows
	// then apply to the records.
	Records func(param func(name string) string) bool
	// Flows is set when its records must carry the firing thread's
	// flowid (program.Header's reserved word) where the program uses
	// flow variables: -x otlp makes a trace of a flow.
	Flows bool
	// Truncate is set when -o must create its file anew rather than
	// append to it, as dtrace does: the output is one object that
	// appending would spoil.
	Truncate bool
	// Guests is set when it takes the events of other machines (-x
	// guest): the text and the timeline do.
	Guests bool
	// Params are further options the format reads (their values reach
	// New through Env.Param, which gives other formats' options too:
	// otlp reads promlabels).
	Params []string
	// Check validates the value of the format's option or of one of its
	// Params at start-up, so that a bad one stops dtrace before anything
	// is compiled; nil accepts any value. An AtExit format's file is
	// also checked to be creatable.
	Check func(option, value string) error
	// Verify checks the format's options together once all are set
	// (after pragmas too): what no single value shows. dest is its
	// option's value, param gives its Params'. nil checks nothing.
	Verify func(dest string, param func(name string) string) error
	// New makes the format's renderer. A Streaming format's renderer
	// is a Printer, which the caller's Work points at its writer; a
	// Serving format's is a Server.
	New func(Env) (Renderer, error)
}

// Env is what a format's constructor gets.
type Env struct {
	// Stderr receives fault, error and drop messages and what system()
	// prints where the output is not text.
	Stderr io.Writer
	// Testing selects the _DTRACE_TESTING form of probe lines.
	Testing bool
	// Settings are the options in effect at the start.
	Settings Settings
	// Sym resolves addresses; Target is $target's pid.
	Sym    format.Symbolizer
	Target int
	// Dest is the value of the format's option: the file an AtExit
	// format writes, the address a Serving format listens on.
	Dest string
	// Param gives the value of one of the format's Params ("" unset).
	Param func(name string) string
	// Names gives a thread's process and thread names, for a process
	// that may be gone (nil: from /proc).
	Names func(pid, tid int) (process, thread string)
	// Version is dtrace's version, Kernel the running kernel's release:
	// what an exporter says of its source.
	Version, Kernel string
	// Text makes dtrace(1M)'s text renderer with its messages going to
	// stderr (Stderr when nil), for formats that print part of their
	// output as text: folded's records, the words of a timeline's
	// faults. The registry's user supplies it, so that renderers need
	// not import each other.
	Text func(stderr io.Writer) Printer
}

// Printer is a Renderer that writes to a stream it can be pointed at:
// what a Streaming format's New returns.
type Printer interface {
	Renderer
	Outputter
	SetOutput(w io.Writer)
}

// Server is the renderer of a Serving format. Between the consumer's
// passes Serve answers the requests that came in (or exports what is
// due), with the aggregations read, so that they never race the
// consumer.
type Server interface {
	Renderer
	Serve(read func() ([]*aggregate.Agg, error)) error
	// Stop ends its work, once: final, when not nil, are the final
	// aggregations, which an exporter sends first; machines names the
	// machines they were merged from, each keyed first by its name (-x
	// guest; nil when not merged). What it could not do it reports on
	// Env.Stderr.
	Stop(final []*aggregate.Agg, machines []string) error
}

// AtExitFormat is the Format of an AtExit format that writes the final
// aggregations to the file its option names (-x name=FILE) with write.
func AtExitFormat(name string, write func(w io.Writer, aggs []*aggregate.Agg, e Env) error) Format {
	return Format{Name: name, Option: name, When: AtExit,
		New: func(e Env) (Renderer, error) { return AtExitFile(e, write), nil }}
}

// AtExitFile is the renderer of an AtExit format that writes a file:
// it ignores records, and when it gets the final aggregations it
// creates (or truncates) the file Env.Dest names and writes them there
// with write.
func AtExitFile(e Env, write func(w io.Writer, aggs []*aggregate.Agg, e Env) error) Renderer {
	return &atExitFile{env: e, write: write}
}

type atExitFile struct {
	Nop
	env   Env
	write func(io.Writer, []*aggregate.Agg, Env) error
}

func (r *atExitFile) Aggregations(aggs []*aggregate.Agg) error {
	return WriteFile(r.env.Dest, func(w io.Writer) error { return r.write(w, aggs, r.env) })
}

// WriteFile creates (or truncates) the file name and writes it with
// write: what an AtExit format does with its destination. The error
// names the file.
func WriteFile(name string, write func(io.Writer) error) error {
	fd, err := os.Create(name)
	if err != nil {
		return err
	}
	err = write(fd)
	if cerr := fd.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	return nil
}
