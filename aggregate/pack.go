package aggregate

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/dtrace-go/dtrace/program"
)

// View holds the options that change how aggregations are laid out
// when printed without a format: agghist, aggpack, aggzoom and encoding.
type View struct {
	// Hist prints count(), sum(), avg() and stddev() values as bars of
	// one histogram per aggregation, one row per key (agghist).
	Hist bool
	// Pack prints quantize() and lquantize() values on one line per key
	// under one header per aggregation (aggpack).
	Pack bool
	// Zoom scales bars so that the tallest is 95% of the full length,
	// instead of showing each bucket's share of the total (aggzoom).
	Zoom bool
	// UTF8 draws histogram bars with Unicode block elements
	// (encoding=utf8).
	UTF8 bool
	// PackUTF8 draws packed bars with Unicode block elements; dtrace does
	// unless encoding=ascii or the terminal is a primitive one.
	PackUTF8 bool
}

// zoomMax is DTRACE_AGGZOOM_MAX, the height of the tallest bar with
// aggzoom.
const zoomMax = 0.95

// layout is what a packed or histogram printing of one aggregation needs
// to know about all its entries (dt_aggregate_total and
// dt_aggregate_minmaxbin).
type layout struct {
	hist, pack bool
	// total is the sum (or with aggzoom, the zoomed maximum) of the
	// values; pos and neg say which signs occur (agghist).
	total    *big.Float
	pos, neg bool
	// minBin and maxBin are the lowest and highest non-zero quantize()
	// buckets of any entry (aggpack).
	minBin, maxBin int
}

// layoutOf returns how a is laid out under the view, or nil when it
// prints in the ordinary way.
func (v View) layoutOf(a *Agg) *layout {
	f := a.Desc.Func
	switch {
	case v.Hist && (f == program.AggCount || f == program.AggSum || f == program.AggAvg || f == program.AggStddev):
		l := &layout{hist: true}
		var total int64
		for _, e := range a.entries {
			val := histValue(a.Desc, e.Data)
			l.pos = l.pos || val > 0
			if val < 0 {
				l.neg = true
				val = -val
			}
			if v.Zoom {
				z := longDouble().SetInt64(val)
				z.Mul(z, longDouble().SetFloat64(1/zoomMax))
				zi, _ := z.Int64()
				total = max(total, zi)
			} else {
				total += val
			}
		}
		l.total = longDouble().SetInt64(total)
		return l
	case v.Pack && f == program.AggQuantize:
		l := &layout{pack: true, minBin: -1}
		for _, e := range a.entries {
			lo, hi := -1, -1
			for i, c := range e.Data {
				if c != 0 {
					if lo < 0 {
						lo = i
					}
					hi = i
				}
			}
			if lo < 0 {
				lo, hi = program.QuantizeZero, program.QuantizeZero
			}
			if l.minBin < 0 || lo < l.minBin {
				l.minBin = lo
			}
			l.maxBin = max(l.maxBin, hi)
		}
		return l
	case v.Pack && f == program.AggLquantize:
		return &layout{pack: true}
	}
	return nil
}

// histValue is the value dt_aggregate_total totals for an entry.
func histValue(d *Desc, data []int64) int64 {
	switch d.Func {
	case program.AggStddev:
		return int64(stddev(data, 1))
	case program.AggAvg:
		if data[0] == 0 {
			return 0
		}
		return data[1] / data[0]
	}
	return data[0]
}

// packedWidth is a key's column width in packed output: integers keep
// theirs, everything else takes 16.
func packedWidth(k program.Value) int {
	if x, ok := k.(program.Int); ok {
		switch x.Size {
		case 1:
			return 3
		case 2:
			return 5
		case 4:
			return 8
		}
	}
	return 16
}

// ndigits is dt_ndigits: the width of a packed histogram's end labels,
// at least 4 (dtrace's count stops one digit short at powers of ten).
func ndigits(v int64) int {
	n, cmp := 1, int64(10)
	if v < 0 {
		if v == -1<<63 {
			v = 1<<63 - 1
		} else {
			v = -v
		}
		n++
	}
	for v > cmp && cmp > 0 {
		n++
		cmp *= 10
	}
	return max(n, 4)
}

// quantRange is the bucket range a packed quantize() prints.
func (l *layout) quantRange() (int, int) {
	lo, hi := l.minBin, l.maxBin
	if lo != 0 && lo != program.QuantizeZero {
		lo--
	}
	if hi < program.QuantizeBuckets-1 {
		hi++
	}
	return lo, hi
}

// packedHeader writes the header printed once above the packed rows of
// an aggregation, sized by the keys of its first entry.
func (p *Printer) packedHeader(b textWriter, a *Agg, e *Entry, l *layout) {
	width := 0
	for _, k := range e.Key {
		width += packedWidth(k) + 1
	}
	if l.hist {
		if width == 0 {
			histHeader(b)
			return
		}
		fmt.Fprintf(b, "\n%*s %41s %-9s\n", width, "key", "------------- Distribution -------------", "count")
		return
	}
	var minw, maxw, n int
	if a.Desc.Func == program.AggQuantize {
		lo, hi := l.quantRange()
		minw, maxw, n = ndigits(program.QuantizeBucketValue(lo)), ndigits(program.QuantizeBucketValue(hi)), hi-lo+1
	} else {
		minw, maxw, n = 7, 8, int(a.Desc.Levels)+2
	}
	key := ""
	if width > 0 {
		key = "key"
	}
	fmt.Fprintf(b, "\n%*s %*s .%s. %*s | count\n", width, key, minw, "min", strings.Repeat("-", n), -maxw, "max")
}

// packedRow writes one entry of a packed or histogram aggregation: its
// keys and its value, ending the line.
func (p *Printer) packedRow(b textWriter, a *Agg, e *Entry, l *layout) {
	row := p.row[:0]
	for _, k := range e.Key {
		row = p.fmt().AppendKey(row, k, true)
	}
	p.row = row
	b.Write(row)
	if l.hist {
		b.WriteByte(' ')
		quantLine(b, e.Data[0], a.normal(), l.total, l.pos, l.neg, p.View.UTF8)
		return
	}
	data := e.Data
	lo, hi := 0, int(a.Desc.Levels)+1
	if a.Desc.Func == program.AggQuantize {
		lo, hi = l.quantRange()
		fmt.Fprintf(b, " %*d :", ndigits(program.QuantizeBucketValue(lo)), program.QuantizeBucketValue(lo))
	} else {
		fmt.Fprintf(b, "%8s :", fmt.Sprintf("< %d", a.Desc.Base))
	}
	total := bucketTotal(data, lo, hi, p.View.Zoom)
	count := int64(0)
	for i := lo; i <= hi; i++ {
		count += data[i]
	}
	for i := lo; i <= hi; i++ {
		packedBar(b, data[i], total, p.View.PackUTF8)
	}
	if a.Desc.Func == program.AggQuantize {
		fmt.Fprintf(b, ": %*d | %d\n", -ndigits(program.QuantizeBucketValue(hi)), program.QuantizeBucketValue(hi), count)
		return
	}
	top := int64(a.Desc.Base) + int64(a.Desc.Levels)*int64(a.Desc.Step)
	fmt.Fprintf(b, ": %-8s | %d\n", fmt.Sprintf(">= %d", top), count)
}

// packedBar writes one bucket of a packed histogram (dt_print_packed):
// a blank for zero, a letter or Unicode block of eight heights for
// positive counts, one of six letters for negative ones.
func packedBar(b textWriter, v int64, total *big.Float, utf8 bool) {
	const ascii, neg = "__xxxxXX", "vvvvVV"
	if v == 0 {
		b.WriteByte(' ')
		return
	}
	// The level is rounded as a bar's length is (barDepth).
	level := func(n int) int { return barDepth(v, n, total) }
	switch {
	case v < 0:
		b.WriteByte(neg[min(level(len(neg)-1), len(neg)-1)])
	case utf8:
		b.WriteRune(rune(0x2581 + min(level(7), 7)))
	default:
		b.WriteByte(ascii[min(level(len(ascii)-1), len(ascii)-1)])
	}
}
