// Package json renders the consumer's events as JSON Lines: one JSON
// object per line for each record of a probe firing, each fault, library
// error and drop, and each aggregation printed at exit. Values are typed
// ({"type":"int","size":4,"signed":true,"value":-1}), stacks are arrays
// of frames, quantizations arrays of [low, high, count] buckets, so that
// nothing needs a regular expression to read. The objects are
// output/jsonrec's; docs/oformat-json.schema.json is the schema.
package json

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"time"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/jsonrec"
	"github.com/dtrace-go/dtrace/program"
)

// Config sets up a Renderer.
type Config struct {
	// Out receives the objects. Stderr receives what system() commands
	// print, which is not JSON (os.Stderr when nil).
	Out, Stderr io.Writer
	// Settings are the options in effect at the start.
	Settings output.Settings
	// Sym resolves stack frames and symbols; Target is $target's pid.
	Sym    format.Symbolizer
	Target int
	// Machine names the host in every object (os.Hostname, or "host").
	Machine string
	// Now gives the time stamped on objects whose record carries no
	// kernel time (time.Now when nil); it also places the kernel's
	// CLOCK_MONOTONIC on the epoch, once, at New.
	Now func() time.Time
}

// Renderer is the JSON Lines renderer.
type Renderer struct {
	dest   output.Dest
	stderr io.Writer
	t      *jsonrec.Typer

	// recs holds, per nesting level (commit() nests), the object of the
	// record being rendered.
	recs []*jsonrec.Record
	b    bytes.Buffer
}

// New returns a JSON Lines renderer.
func New(c Config) *Renderer {
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	t := jsonrec.NewTyper(jsonrec.Config{Settings: c.Settings, Sym: c.Sym, Target: c.Target, Machine: c.Machine, Now: c.Now})
	return &Renderer{dest: output.NewDest(c.Out), stderr: c.Stderr, t: t}
}

// SetOutput makes w the writer objects go to, unless freopen()
// redirected them.
func (j *Renderer) SetOutput(w io.Writer) { j.dest.SetOutput(w) }

// Output is where system() commands print: the error stream, since
// their text is not JSON.
func (j *Renderer) Output() io.Writer { return j.stderr }

// Begin starts the object of a record, stamped with the time the kernel
// wrote it (the consumer asks for stamped records under -x oformat=json).
func (j *Renderer) Begin(r *output.Record) error {
	j.recs = append(j.recs, j.t.Record(r))
	return nil
}

// End writes the record's object, if the record holds data.
func (j *Renderer) End(r *output.Record) error {
	rec, ok := output.Pop(&j.recs)
	if !ok {
		return nil
	}
	if !r.Data {
		return nil
	}
	return j.write(rec)
}

func (j *Renderer) write(v any) error {
	j.b.Reset()
	enc := json.NewEncoder(&j.b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := j.dest.Writer().Write(j.b.Bytes())
	return err
}

// Item adds one action's output to the record's object; after
// freopen(), objects go to its file.
func (j *Renderer) Item(r *output.Record, it *output.Item) error {
	if len(j.recs) == 0 {
		return nil
	}
	rec := j.recs[len(j.recs)-1]
	a, err := j.t.Action(it)
	if err != nil {
		return err
	}
	if it.Kind == program.ActFreopen {
		j.dest.Reopen(it.File)
	}
	rec.Actions = append(rec.Actions, a)
	return nil
}

// Fault writes a fault's object.
func (j *Renderer) Fault(f *output.Fault) error { return j.write(j.t.Fault(f)) }

// Error writes a library error's object.
func (j *Renderer) Error(e *output.Error) error { return j.write(j.t.Error(e)) }

// Drop writes a drop's object.
func (j *Renderer) Drop(d *output.Drop) error { return j.write(j.t.Drop(d)) }

// Aggregations writes, at exit, one object per aggregation printa() did
// not print.
func (j *Renderer) Aggregations(aggs []*aggregate.Agg) error {
	for _, a := range aggs {
		if a == nil || a.Printed {
			continue
		}
		if err := j.write(j.t.Final(a)); err != nil {
			return err
		}
	}
	return nil
}

// Flush does nothing: objects are written whole.
func (j *Renderer) Flush() error { return nil }

// Close does nothing: the consumer closes freopen()'s files.
func (j *Renderer) Close() error { return nil }
