// Package folded renders aggregations as collapsed ("folded") stacks, the
// input of flamegraph.pl, speedscope and inferno: one line per entry, its
// frames root first separated by ';', a space and the value. A stack key
// (stack(), ustack()) gives one frame per program counter, outermost
// first, without offsets so that samples of one function fold together;
// any other key gives one frame of its own. Other keys come first, in key
// order, then user stacks, then kernel stacks. Records
// (printf(), trace() and the others) are printed as dtrace(1M) text.
package folded

import (
	"fmt"
	"io"
	"strings"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// Renderer prints records as text and aggregations folded.
type Renderer struct {
	// Printer prints the records (dtrace(1M)'s text renderer).
	output.Printer
	sym  format.Symbolizer
	sort aggregate.SortOptions
}

// New returns a folded renderer: records prints the records, sym
// resolves stack frames and sort orders the entries.
func New(records output.Printer, sym format.Symbolizer, sort aggregate.SortOptions) *Renderer {
	return &Renderer{Printer: records, sym: sym, sort: sort}
}

// Item prints printa()'s aggregations folded, every other item as text.
func (f *Renderer) Item(r *output.Record, it *output.Item) error {
	if it.Kind != program.ActPrinta {
		if it.Kind == program.ActSetopt && it.Settings != nil {
			f.sort = it.Settings.AggSort
		}
		return f.Printer.Item(r, it)
	}
	if err := f.Printer.Flush(); err != nil {
		return err
	}
	return f.write(f.Output(), it.Aggs, false)
}

// Aggregations prints, at exit, the aggregations printa() did not.
func (f *Renderer) Aggregations(aggs []*aggregate.Agg) error {
	return f.write(f.Output(), aggs, true)
}

func (f *Renderer) write(w io.Writer, aggs []*aggregate.Agg, skipPrinted bool) error {
	var b strings.Builder
	for _, a := range aggs {
		if a == nil || (skipPrinted && a.Printed) {
			continue
		}
		for _, s := range output.Fold(a, f.sym, f.sort) {
			b.WriteString(strings.Join(s.Frames, ";"))
			fmt.Fprintf(&b, " %d\n", s.Value)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
