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
func (a *Agg) Datum(e *Entry) string {
	d, normal := a.Desc, a.normal()
	switch d.Func {
	case Quantize, Lquantize, Llquantize:
		return d.Histogram(e.Data, normal)
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
		for _, e := range a.Sorted(p.Sort) {
			printed = true
			if f == nil {
				p.keysText(&b, e.Key)
				b.WriteString(a.Datum(e))
				p.perCPU(&b, a, e)
				b.WriteByte('\n')
				continue
			}
			if err := p.fmt().Printa(&b, f, e.Key, []format.Value{a.Result(e)}); err != nil {
				return err
			}
		}
	} else {
		for _, bd := range Join(aggs, p.Sort) {
			printed = true
			if f == nil {
				p.keysText(&b, bd.Key)
				for i, e := range bd.Entries {
					b.WriteString(aggs[i].Datum(e))
					p.perCPU(&b, aggs[i], e)
				}
				b.WriteByte('\n')
				continue
			}
			results := make([]format.Value, len(aggs))
			for i, e := range bd.Entries {
				results[i] = aggs[i].Result(e)
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
	for _, it := range items {
		p.keysText(&b, it.e.Key)
		b.WriteString(it.agg.Datum(it.e))
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
		b.WriteString(a.Datum(&Entry{Key: e.Key, Data: d, filler: e.filler}))
	}
}
