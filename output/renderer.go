package output

import (
	"io"
	"os"

	"github.com/dtrace-go/dtrace/aggregate"
)

// Renderer turns the consumer's decoded events into output. The consumer
// calls it from one goroutine, in the order dtrace(1M) prints: for each
// record Begin, Item for each item, End; Fault, Error and Drop as they
// come; Aggregations once at exit; Flush after each pass over the
// buffers. Begin/Item/End may nest once: commit() hands over the records
// it commits between its Item and the next.
//
// A renderer decodes no bytes: everything it needs is in the events.
// Returning an error stops the consumer.
type Renderer interface {
	Begin(r *Record) error
	Item(r *Record, it *Item) error
	End(r *Record) error
	Fault(f *Fault) error
	Error(e *Error) error
	Drop(d *Drop) error
	// Aggregations is called at exit with every aggregation, in id
	// order, as read last; Printed marks those printa() printed
	// (dtrace(1M) prints only the others).
	Aggregations(aggs []*aggregate.Agg) error
	Flush() error
	Close() error
}

// Outputter is implemented by renderers that write to a stream:
// system()'s command writes its output there.
type Outputter interface {
	Output() io.Writer
}

// Nop is a Renderer that ignores everything; embed it to implement only
// the methods of interest.
type Nop struct{}

// Begin does nothing.
func (Nop) Begin(*Record) error { return nil }

// Item does nothing.
func (Nop) Item(*Record, *Item) error { return nil }

// End does nothing.
func (Nop) End(*Record) error { return nil }

// Fault does nothing.
func (Nop) Fault(*Fault) error { return nil }

// Error does nothing.
func (Nop) Error(*Error) error { return nil }

// Drop does nothing.
func (Nop) Drop(*Drop) error { return nil }

// Aggregations does nothing.
func (Nop) Aggregations([]*aggregate.Agg) error { return nil }

// Flush does nothing.
func (Nop) Flush() error { return nil }

// Close does nothing.
func (Nop) Close() error { return nil }

// Snapshotter is implemented by renderers that mark where a snapshot's
// records begin (package output/text prints a header line).
type Snapshotter interface {
	Snapshot(s *Snapshot) error
}

// Dest is where a renderer's output goes: the writer it was given or,
// after freopen(), the file freopen() opened, until freopen("") sends
// it back.
type Dest struct {
	base, out io.Writer
	reopened  *os.File
}

// NewDest returns a Dest that writes to w.
func NewDest(w io.Writer) Dest { return Dest{base: w, out: w} }

// SetOutput makes w the writer output goes to, now unless freopen()
// redirected it, else after freopen("").
func (d *Dest) SetOutput(w io.Writer) {
	d.base = w
	if d.reopened == nil {
		d.out = w
	}
}

// Reopen sends the output to f, the file freopen() opened, or, for
// freopen("") (a nil f), back to the writer given.
func (d *Dest) Reopen(f *os.File) {
	d.reopened, d.out = f, d.base
	if f != nil {
		d.out = f
	}
}

// Writer returns where output goes now.
func (d *Dest) Writer() io.Writer { return d.out }
