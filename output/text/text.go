// Package text renders the consumer's events as dtrace(1M) prints them:
// the heading and probe lines (flowindent's indented ones included),
// printf(), printa(), trace(), print(), tracemem() and stack output
// through packages format and aggregate, the aggregations at exit, and
// the fault, error and drop messages on the error stream. Its output is
// byte for byte what the conformance corpus records.
package text

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// Config sets up a Renderer.
type Config struct {
	// Out receives the records' output; Stderr the fault, error and
	// drop messages (os.Stderr when nil).
	Out, Stderr io.Writer
	// Testing selects the _DTRACE_TESTING form of probe lines (no CPU
	// and id columns).
	Testing bool
	// Settings are the options in effect at the start.
	Settings output.Settings
	// Sym resolves addresses for stacks and symbols; Target is the pid
	// of $target.
	Sym    format.Symbolizer
	Target int
}

// Renderer is the dtrace(1M) text renderer.
type Renderer struct {
	dest    output.Dest
	stderr  io.Writer
	testing bool
	set     output.Settings
	fmt     *format.Printer
	aggp    *aggregate.Printer

	// b holds the output of the record being rendered; quiet holds,
	// per nesting level, the quiet setting its record began under.
	b     bytes.Buffer
	quiet []bool

	// heading is set once the probe lines' heading was printed; indent,
	// lastProbe and lastClause track flowindent's call depth.
	heading    bool
	indent     int
	lastProbe  uint32
	lastClause int
}

// New returns a text renderer.
func New(c Config) *Renderer {
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	t := &Renderer{dest: output.NewDest(c.Out), stderr: c.Stderr, testing: c.Testing, set: c.Settings}
	t.fmt = &format.Printer{
		Target:    c.Target,
		StrSize:   c.Settings.StrSize,
		RawBytes:  c.Settings.RawBytes,
		Sym:       c.Sym,
		NoResolve: c.Settings.NoResolve,
	}
	t.aggp = &aggregate.Printer{Fmt: t.fmt, Sort: c.Settings.AggSort, View: c.Settings.AggView, CPUs: c.Settings.CPUs}
	return t
}

// SetOutput makes w the writer output goes to, unless freopen()
// redirected it.
func (t *Renderer) SetOutput(w io.Writer) { t.dest.SetOutput(w) }

// Output returns where output goes now: the file freopen() named, or the
// writer given.
func (t *Renderer) Output() io.Writer { return t.dest.Writer() }

// Begin starts a record: on the first record of a firing that holds data
// it prints the heading (once) and the probe line, unless quiet (with
// flowindent, even when quiet, as dtrace does).
func (t *Renderer) Begin(r *output.Record) error {
	t.quiet = append(t.quiet, t.set.Quiet)
	if r.Data && r.First && (t.set.FlowIndent || !t.set.Quiet) {
		t.probeLine(r)
	}
	return nil
}

// End ends a record with a newline unless quiet and writes it out.
func (t *Renderer) End(r *output.Record) error {
	quiet := t.set.Quiet
	if n := len(t.quiet); n > 0 {
		quiet = t.quiet[n-1]
		t.quiet = t.quiet[:n-1]
	}
	if r.Data && !quiet {
		t.b.WriteByte('\n')
	}
	// Records accumulate up to flushSize bytes between writes (the
	// consumer calls Flush after each pass over the buffers and at
	// exit), as dtrace(1M)'s stdio buffers them: a write(2) per record
	// would bound a stream's rate. Nested records (commit()'s) are
	// written at once after the committing record's output.
	if t.b.Len() < flushSize && len(t.quiet) == 0 {
		return nil
	}
	return t.flush()
}

// flushSize is how much record output End holds before writing it.
const flushSize = 64 << 10

// spillWriter adds to the record's output and writes it out once it
// holds flushSize bytes, unless the record is nested: printa() of a
// large aggregation then needs no buffer the size of its text.
type spillWriter struct{ t *Renderer }

func (w spillWriter) Write(p []byte) (int, error) {
	w.t.b.Write(p)
	if w.t.b.Len() >= flushSize && len(w.t.quiet) <= 1 {
		if err := w.t.flush(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// flush writes what the record printed so far, so that what an action
// does outside the text (a command's output, a switch of file, the
// committed records) comes after it.
func (t *Renderer) flush() error {
	if t.b.Len() == 0 {
		return nil
	}
	_, err := t.dest.Writer().Write(t.b.Bytes())
	t.b.Reset()
	return err
}

// Item prints one item of the record.
func (t *Renderer) Item(r *output.Record, it *output.Item) error {
	b := &t.b
	switch it.Kind {
	case program.ActTrace, program.ActSym:
		return t.fmt.Trace(b, it.Value, t.set.Quiet)
	case program.ActPrint:
		if it.ByValue {
			return t.fmt.PrintValue(b, it.Type, it.Data)
		}
		return t.fmt.PrintType(b, it.Addr, it.Type, it.Data, t.set.PrintSize)
	case program.ActTracemem:
		return format.Tracemem(b, it.Data)
	case program.ActPrintf:
		return t.fmt.Printf(b, it.Format, it.Args)
	case program.ActStack:
		st, _ := it.Value.(program.Stack)
		return t.fmt.PrintStack(b, st)
	case program.ActPrinta:
		return t.aggp.Printa(spillWriter{t}, it.Format, it.Aggs...)
	case program.ActSystem, program.ActCommit:
		return t.flush()
	case program.ActFreopen:
		if err := t.flush(); err != nil {
			return err
		}
		t.dest.Reopen(it.File)
	case program.ActFtruncate:
		return t.truncate()
	case program.ActSetopt:
		if it.Settings != nil {
			t.set = *it.Settings
			t.aggp.Sort = t.set.AggSort
			t.aggp.View = t.set.AggView
		}
	}
	return nil
}

// probeLine prints the heading (once) and the probe column of a record:
// "CPU ID FUNCTION:NAME", or with flowindent the function indented by
// call depth with "->" and "<-" marks.
func (t *Renderer) probeLine(r *output.Record) {
	b := &t.b
	flow := t.set.FlowIndent
	if !t.heading {
		t.heading = true
		switch {
		case flow && t.testing:
			fmt.Fprintf(b, "%-41s\n", "FUNCTION")
		case flow:
			fmt.Fprintf(b, "%3s %-41s\n", "CPU", "FUNCTION")
		case t.testing:
			fmt.Fprintf(b, "%32s\n", "FUNCTION:NAME")
		default:
			fmt.Fprintf(b, "%3s %6s %32s\n", "CPU", "ID", "FUNCTION:NAME")
		}
	}
	p := r.Probe
	if !r.Known {
		p = output.Probe{}
	}
	if !flow {
		if t.testing {
			fmt.Fprintf(b, "%32s ", p.Function+":"+p.Name)
		} else {
			fmt.Fprintf(b, "%3d %6d %32s ", r.CPU, p.ID, p.Function+":"+p.Name)
		}
		return
	}
	kind, prefix := flowKind(p.Provider, p.Name)
	if kind == flowEntry && r.Clause != t.lastClause && p.ID == t.lastProbe {
		kind, prefix = flowNone, "| "
	}
	if kind == flowReturn && t.indent > 0 {
		t.indent -= 2
	}
	col := strings.Repeat(" ", t.indent) + prefix + p.Function
	if kind == flowNone {
		col += ":" + p.Name
	}
	if t.testing {
		fmt.Fprintf(b, "%-41s ", col)
	} else {
		fmt.Fprintf(b, "%3d %-41s ", r.CPU, col)
	}
	if kind == flowEntry {
		t.indent += 2
	}
	t.lastProbe, t.lastClause = p.ID, r.Clause
}

// Kinds of probes for flowindent.
const (
	flowNone = iota
	flowEntry
	flowReturn
)

// flowKind classifies a probe name: "entry" or "...-entry" enters,
// "return" or "...-return" returns; syscalls use double arrows.
func flowKind(prov, name string) (int, string) {
	sys := prov == "syscall"
	switch {
	case name == "entry" || strings.HasSuffix(name, "-entry"):
		if sys {
			return flowEntry, " => "
		}
		return flowEntry, " -> "
	case name == "return" || strings.HasSuffix(name, "-return"):
		if sys {
			return flowReturn, " <= "
		}
		return flowReturn, " <- "
	}
	return flowNone, "| "
}

// Aggregations prints, at exit, the aggregations printa() did not.
func (t *Renderer) Aggregations(aggs []*aggregate.Agg) error {
	return t.PrintAggregations(t.dest.Writer(), aggs)
}

// PrintAggregations prints the aggregations printa() did not to w,
// sorted together as dtrace(1M) prints them at exit.
func (t *Renderer) PrintAggregations(w io.Writer, aggs []*aggregate.Agg) error {
	return t.aggp.PrintAll(w, aggs)
}

// truncate runs ftruncate(): what was printed so far is written, then the
// output file is emptied and written again from its start. Output that
// is no file (a terminal, a pipe) is left as it is, as dtrace(1M)'s
// ftruncate(2) of such a descriptor fails silently.
func (t *Renderer) truncate() error {
	if err := t.flush(); err != nil {
		return err
	}
	f, ok := t.dest.Writer().(interface {
		Truncate(size int64) error
		Seek(offset int64, whence int) (int64, error)
	})
	if !ok {
		return nil
	}
	if f.Truncate(0) == nil {
		_, _ = f.Seek(0, io.SeekStart)
	}
	return nil
}

// Flush writes out anything held.
func (t *Renderer) Flush() error { return t.flush() }

// Close writes out anything held; the consumer closes freopen()'s files.
func (t *Renderer) Close() error { return t.flush() }
