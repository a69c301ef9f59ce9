package aggregate

import (
	"fmt"
	"io"
	"strings"

	"github.com/dtrace-go/dtrace/format"
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
}

func (p *Printer) fmt() *format.Printer {
	if p.Fmt == nil {
		return &format.Printer{}
	}
	return p.Fmt
}

// Datum returns dtrace's default text for an entry's value
// (dt_print_datum): " %16lld" for count, sum, min, max and avg,
// " %16llu" for stddev, the histogram for the quantizations.
func (a *Agg) Datum(e *Entry) string { return a.datum(e, View{}) }

// datum is Datum under the aggzoom and encoding options.
func (a *Agg) datum(e *Entry, view View) string {
	d, normal := a.Desc, a.normal()
	switch d.Func {
	case Quantize, Lquantize, Llquantize:
		return d.histogram(e.Data, normal, view)
	case Avg:
		var v int64
		if e.Data[0] != 0 {
			v = e.Data[1] / int64(normal) / e.Data[0]
		}
		return fmt.Sprintf(" %16d", v)
	case Stddev:
		return fmt.Sprintf(" %16d", stddev(e.Data, normal))
	}
	v := int64(0)
	if !e.filler {
		v = d.Scalar(e.Data)
	}
	// dtrace divides the 64-bit value as unsigned and prints it signed.
	return fmt.Sprintf(" %16d", int64(uint64(v)/normal))
}

// Result returns the value a %@ conversion prints for an entry:
// count() is unsigned, the other scalars signed, histograms Verbatim.
func (a *Agg) Result(e *Entry) format.Value {
	d, normal := a.Desc, a.normal()
	switch d.Func {
	case Quantize, Lquantize, Llquantize:
		return format.Verbatim(d.Histogram(e.Data, normal))
	case Count:
		return format.U64(uint64(e.Data[0]) / normal)
	case Avg:
		// dtrace's printa() computes the average in unsigned arithmetic.
		var v uint64
		if e.Data[0] != 0 {
			v = uint64(e.Data[1]) / normal / uint64(e.Data[0])
		}
		return format.I64(int64(v))
	case Stddev:
		return format.I64(int64(stddev(e.Data, normal)))
	}
	v := int64(0)
	if !e.filler {
		v = d.Scalar(e.Data)
	}
	return format.I64(v / int64(normal))
}

// result is Result under the aggzoom and encoding options.
func (p *Printer) result(a *Agg, e *Entry) format.Value {
	switch a.Desc.Func {
	case Quantize, Lquantize, Llquantize:
		if p.View.Zoom || p.View.UTF8 {
			return format.Verbatim(a.Desc.histogram(e.Data, a.normal(), p.View))
		}
	}
	return a.Result(e)
}

// keysText is the default text of a key tuple.
func (p *Printer) keysText(b *strings.Builder, key []format.Value) {
	for _, k := range key {
		b.WriteString(p.fmt().Key(k))
	}
}

// Printa writes the output of printa(@a, ...) (f nil) or
// printa(f, @a, ...). Several aggregations are joined on their keys.
// Without a format dtrace starts with an empty line, even when the
// aggregation is empty. Aggregations with entries are marked Printed.
func (p *Printer) Printa(w io.Writer, f *format.Format, aggs ...*Agg) error {
	var b strings.Builder
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
		for _, e := range a.Sorted(p.Sort) {
			if l != nil {
				if !printed {
					p.packedHeader(&b, a, e, l)
				}
				printed = true
				p.packedRow(&b, a, e, l)
				continue
			}
			printed = true
			if f == nil {
				p.keysText(&b, e.Key)
				b.WriteString(a.datum(e, p.View))
				p.perCPU(&b, a, e)
				b.WriteByte('\n')
				continue
			}
			if err := p.fmt().Printa(&b, f, e.Key, []format.Value{p.result(a, e)}); err != nil {
				return err
			}
		}
	} else {
		for _, bd := range Join(aggs, p.Sort) {
			printed = true
			if f == nil {
				p.keysText(&b, bd.Key)
				for i, e := range bd.Entries {
					b.WriteString(aggs[i].datum(e, p.View))
					p.perCPU(&b, aggs[i], e)
				}
				b.WriteByte('\n')
				continue
			}
			results := make([]format.Value, len(aggs))
			for i, e := range bd.Entries {
				results[i] = p.result(aggs[i], e)
			}
			if err := p.fmt().Printa(&b, f, bd.Key, results); err != nil {
				return err
			}
		}
	}
	if printed {
		for _, a := range aggs {
			a.Printed = true
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// PrintAll writes, at exit, every aggregation printa() has not printed:
// all their entries sorted together (by aggregation id first), each as
// its keys, its value and a newline. The caller prints dtrace's empty
// line before it.
func (p *Printer) PrintAll(w io.Writer, aggs []*Agg) error {
	items := makeItems(aggs, true)
	sortItems(items, p.Sort)
	var b strings.Builder
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
	var header *Agg
	for _, it := range items {
		if l := layouts[it.agg]; l != nil {
			if header != it.agg {
				p.packedHeader(&b, it.agg, it.e, l)
				header = it.agg
			}
			p.packedRow(&b, it.agg, it.e, l)
			continue
		}
		p.keysText(&b, it.e.Key)
		b.WriteString(it.agg.datum(it.e, p.View))
		p.perCPU(&b, it.agg, it.e)
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// perCPU writes each CPU's value after the merged one, as dtrace does
// with aggpercpu: "\n    [CPU n]" and the value.
func (p *Printer) perCPU(b *strings.Builder, a *Agg, e *Entry) {
	if !a.PerCPU {
		return
	}
	for _, cpu := range p.CPUs {
		d := e.CPUData[cpu]
		if d == nil {
			d = make([]int64, a.Desc.NSlots())
		}
		fmt.Fprintf(b, "\n    [CPU %d]", cpu)
		b.WriteString(a.datum(&Entry{Key: e.Key, Data: d, filler: e.filler}, p.View))
	}
}
