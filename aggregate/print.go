package aggregate

import (
	"fmt"
	"io"
	"slices"

	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/program"
)

// Printer prints aggregations: printa() with and without a format, and
// the aggregations left unprinted at exit.
type Printer struct {
	// Fmt formats keys and printa() formats (symbols, strsize, ...).
	Fmt *format.Printer
	// Sort holds the aggsort* options in effect.
	Sort SortOptions
	// CPUs lists the CPU ids printed for aggregations kept per CPU
	// (aggpercpu), in order.
	CPUs []int
	// View holds the agghist, aggpack, aggzoom and encoding options.
	View View

	// row is the line being built, reused from line to line; out holds
	// the text on its way to the writer; items is the sort's array and
	// text the lines made for it, results printa()'s values. All are kept from call to call,
	// so that printing a large aggregation again allocates nothing.
	row     []byte
	out     outBuf
	items   []item
	text    []byte
	results []program.Value
}

func (p *Printer) fmt() *format.Printer {
	if p.Fmt == nil {
		p.Fmt = &format.Printer{}
	}
	return p.Fmt
}

// Datum returns dtrace's default text for an entry's value
// (dt_print_datum): " %16lld" for count, sum, min, max and avg,
// " %16llu" for stddev, the histogram for the quantizations.
func (a *Agg) Datum(e *Entry) string { return string(a.appendDatum(nil, e, View{})) }

// appendDatum appends Datum's text under the aggzoom and encoding
// options; scalars without allocating.
func (a *Agg) appendDatum(b []byte, e *Entry, view View) []byte {
	d, normal := a.Desc, a.normal()
	switch d.Func {
	case program.AggQuantize, program.AggLquantize, program.AggLlquantize:
		return append(b, d.histogram(e.Data, normal, view)...)
	case program.AggAvg:
		var v int64
		if e.Data[0] != 0 {
			v = e.Data[1] / int64(normal) / e.Data[0]
		}
		return format.AppendPadded(b, v, 16)
	case program.AggStddev:
		return fmt.Appendf(b, " %16d", stddev(e.Data, normal))
	}
	v := int64(0)
	if !e.filler {
		v = d.Scalar(e.Data)
	}
	// dtrace divides the 64-bit value as unsigned and prints it signed.
	return format.AppendPadded(b, int64(uint64(v)/normal), 16)
}

// Result returns the value a %@ conversion prints for an entry:
// count() is unsigned, the other scalars signed, histograms Verbatim.
func (a *Agg) Result(e *Entry) program.Value {
	d, normal := a.Desc, a.normal()
	switch d.Func {
	case program.AggQuantize, program.AggLquantize, program.AggLlquantize:
		return program.Verbatim(d.Histogram(e.Data, normal))
	case program.AggCount:
		return program.U64(uint64(e.Data[0]) / normal)
	case program.AggAvg:
		// dtrace's printa() computes the average in unsigned arithmetic.
		var v uint64
		if e.Data[0] != 0 {
			v = uint64(e.Data[1]) / normal / uint64(e.Data[0])
		}
		return program.I64(int64(v))
	case program.AggStddev:
		return program.I64(int64(stddev(e.Data, normal)))
	}
	v := int64(0)
	if !e.filler {
		v = d.Scalar(e.Data)
	}
	return program.I64(v / int64(normal))
}

// result is Result under the aggzoom and encoding options.
func (p *Printer) result(a *Agg, e *Entry) program.Value {
	switch a.Desc.Func {
	case program.AggQuantize, program.AggLquantize, program.AggLlquantize:
		if p.View.Zoom || p.View.UTF8 {
			return program.Verbatim(a.Desc.histogram(e.Data, a.normal(), p.View))
		}
	}
	return a.Result(e)
}

// appendKeys appends the default text of a key tuple.
func (p *Printer) appendKeys(b []byte, key []program.Value) []byte {
	for _, k := range key {
		b = p.fmt().AppendKey(b, k, false)
	}
	return b
}

// appendRow appends one line of printa() without a format or of the
// exit print: the keys, each aggregation's value (with aggpercpu, each
// CPU's after it) and a newline.
func (p *Printer) appendRow(row []byte, key []program.Value, aggs []*Agg, es []*Entry) []byte {
	row = p.appendKeys(row, key)
	for i, e := range es {
		row = aggs[i].appendDatum(row, e, p.View)
		row = p.appendPerCPU(row, aggs[i], e)
	}
	return append(row, '\n')
}

// writeRow writes appendRow's line, built in p's buffer, so that
// printing does not allocate per entry.
func (p *Printer) writeRow(b *outBuf, key []program.Value, aggs []*Agg, es []*Entry) {
	p.row = p.appendRow(p.row[:0], key, aggs, es)
	b.Write(p.row)
	b.spill()
}

// writeItem writes an item's line: the text sortItems made of it, or
// else one made now.
func (p *Printer) writeItem(b *outBuf, it *item) {
	if it.end > it.off {
		b.Write(p.text[it.off:it.end])
		b.spill()
		return
	}
	one, oneAgg := [1]*Entry{it.e}, [1]*Agg{it.agg}
	p.writeRow(b, it.e.Key, oneAgg[:], one[:])
}

// Printa writes the output of printa(@a, ...) (f nil) or
// printa(f, @a, ...). Several aggregations are joined on their keys.
// Without a format dtrace starts with an empty line, even when the
// aggregation is empty. Aggregations with entries are marked Printed.
func (p *Printer) Printa(w io.Writer, f *format.Format, aggs ...*Agg) error {
	b := p.begin(w)
	if f == nil {
		b.WriteByte('\n')
	}
	printed := false
	if len(aggs) == 1 {
		a := aggs[0]
		var l *layout
		if f == nil {
			l = p.View.layoutOf(a)
		}
		items := p.sortItems(aggs, false, func(*Agg) bool { return f == nil && l == nil })
		defer p.release(items)
		for i := range items {
			e := items[i].e
			if l != nil {
				if !printed {
					p.packedHeader(b, a, e, l)
				}
				printed = true
				p.packedRow(b, a, e, l)
				b.spill()
				continue
			}
			printed = true
			if f == nil {
				p.writeItem(b, &items[i])
				continue
			}
			p.results = append(p.results[:0], p.result(a, e))
			if err := p.fmt().Printa(b, f, e.Key, p.results); err != nil {
				return err
			}
			b.spill()
		}
	} else {
		for _, bd := range Join(aggs, p.Sort) {
			printed = true
			if f == nil {
				p.writeRow(b, bd.Key, aggs, bd.Entries)
				continue
			}
			p.results = p.results[:0]
			for i, e := range bd.Entries {
				p.results = append(p.results, p.result(aggs[i], e))
			}
			if err := p.fmt().Printa(b, f, bd.Key, p.results); err != nil {
				return err
			}
			b.spill()
		}
	}
	if printed {
		for _, a := range aggs {
			a.Printed = true
		}
	}
	return b.flush()
}

// PrintAll writes, at exit, every aggregation printa() has not printed:
// all their entries sorted together (by aggregation id first), each as
// its keys, its value and a newline. The caller prints dtrace's empty
// line before it.
func (p *Printer) PrintAll(w io.Writer, aggs []*Agg) error {
	// With agghist or aggpack, each aggregation laid out that way gets
	// its header before its first row (the items are sorted by
	// aggregation first).
	var layouts map[*Agg]*layout
	if p.View.Hist || p.View.Pack {
		layouts = map[*Agg]*layout{}
		for _, a := range aggs {
			if l := p.View.layoutOf(a); l != nil {
				layouts[a] = l
			}
		}
	}
	items := p.sortItems(aggs, true, func(a *Agg) bool { return layouts[a] == nil })
	defer p.release(items)
	b := p.begin(w)
	var header *Agg
	for i := range items {
		it := &items[i]
		if l := layouts[it.agg]; l != nil {
			if header != it.agg {
				p.packedHeader(b, it.agg, it.e, l)
				header = it.agg
			}
			p.packedRow(b, it.agg, it.e, l)
			b.spill()
			continue
		}
		p.writeItem(b, it)
	}
	return b.flush()
}

// sortItems returns the entries of aggs (those not yet printed, with
// skipPrinted) in dtrace's order, in an array p keeps for the next call.
// The lines of the aggregations render selects are made before the sort,
// in the order the entries were added: their keys and values are then
// read in the order they lie in memory, where after the sort every line
// would be a few cache misses away.
func (p *Printer) sortItems(aggs []*Agg, skipPrinted bool, render func(*Agg) bool) []item {
	p.items = fillItems(p.items, aggs, skipPrinted, p.Sort.KeyPos)
	p.text = p.text[:0]
	var one [1]*Entry
	var oneAgg [1]*Agg
	for i := range p.items {
		it := &p.items[i]
		if !render(it.agg) {
			continue
		}
		one[0], oneAgg[0] = it.e, it.agg
		it.off = len(p.text)
		p.text = p.appendRow(p.text, it.e.Key, oneAgg[:], one[:])
		it.end = len(p.text)
		if i == 0 {
			// Room for lines like the first, rather than growing the
			// buffer by doubling through a million of them.
			p.text = slices.Grow(p.text, (len(p.items)-1)*(it.end-it.off)*9/8)
		}
	}
	sortItems(p.items, p.Sort)
	return p.items
}

// release forgets the entries the sort array points to, so that they do
// not outlive their aggregation.
func (p *Printer) release(items []item) { clear(items) }

// appendPerCPU appends each CPU's value after the merged one, as dtrace
// does with aggpercpu: "\n    [CPU n]" and the value.
func (p *Printer) appendPerCPU(b []byte, a *Agg, e *Entry) []byte {
	if !a.PerCPU {
		return b
	}
	for _, cpu := range p.CPUs {
		d := e.CPUData[cpu]
		if d == nil {
			d = make([]int64, a.Desc.NSlots())
		}
		b = fmt.Appendf(b, "\n    [CPU %d]", cpu)
		b = a.appendDatum(b, &Entry{Key: e.Key, Data: d, filler: e.filler}, p.View)
	}
	return b
}
