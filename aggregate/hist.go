package aggregate

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/dtrace-go/dtrace/program"
)

const (
	histBar    = "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@"
	histSpaces = "                                        "
)

func histHeader(b textWriter) {
	fmt.Fprintf(b, "\n%16s %41s %-9s\n", "value", "------------- Distribution -------------", "count")
}

// barDepth is dt_print_quantline's bar length, (|val| * len) / total
// rounded, computed in x87 long double precision like dtrace.
func barDepth(val int64, length int, total *big.Float) int {
	if total.Sign() == 0 {
		return 0
	}
	f := longDouble().SetInt64(val)
	f.Abs(f)
	f.Mul(f, longDouble().SetInt64(int64(length)))
	f.Quo(f, total)
	f.Add(f, longDouble().SetFloat64(0.5))
	d, _ := f.Int64()
	return int(d)
}

// quantLine writes one histogram row after its label (dt_print_quantline);
// utf8 draws positive bars with Unicode blocks (encoding=utf8).
func quantLine(b textWriter, val int64, normal uint64, total *big.Float, positives, negatives, utf8 bool) {
	n := int64(uint64(val) / normal)
	length := 40
	if !negatives {
		depth := 0
		if positives {
			if utf8 {
				quantLineUTF8(b, val, n, total)
				return
			}
			depth = barDepth(val, length, total)
		}
		fmt.Fprintf(b, "|%s%s %-9d\n", histBar[length-depth:], histSpaces[depth:], n)
		return
	}
	if !positives {
		depth := barDepth(val, length, total)
		fmt.Fprintf(b, "%s%s| %-9d\n", histSpaces[depth:], histBar[length-depth:], n)
		return
	}
	// Both signs: half-length bars on either side of a centre line.
	length /= 2
	ats, spaces := histBar[length:], histSpaces[length:]
	depth := barDepth(val, length, total)
	if val <= 0 {
		fmt.Fprintf(b, "%s%s|%*s %-9d\n", spaces[depth:], ats[length-depth:], length, "", n)
	} else {
		fmt.Fprintf(b, "%20s|%s%s %-9d\n", "", ats[length-depth:], spaces[depth:], n)
	}
}

// quantLineUTF8 is dt_print_quantline_utf8: whole blocks and one
// partial block of eighths.
func quantLineUTF8(b textWriter, val, n int64, total *big.Float) {
	f := longDouble().SetInt64(val)
	f.Abs(f)
	f.Mul(f, longDouble().SetInt64(40))
	f.Quo(f, total)
	w, _ := f.Int64()
	frac := f.Sub(f, longDouble().SetInt64(w))
	frac.Mul(frac, longDouble().SetInt64(8))
	partial, _ := frac.Int64()
	b.WriteByte('|')
	i := int(w)
	for range i {
		b.WriteRune(0x2588)
	}
	if partial != 0 {
		b.WriteRune(rune(0x258f - (partial - 1)))
		i++
	}
	fmt.Fprintf(b, "%s %-9d\n", histSpaces[min(i, len(histSpaces)):], n)
}

// signs returns the total the bars of first..last are measured against
// and the signs present there.
func signs(data []int64, first, last int, zoom bool) (*big.Float, bool, bool) {
	pos, neg := false, false
	for i := first; i <= last; i++ {
		pos = pos || data[i] > 0
		neg = neg || data[i] < 0
	}
	return bucketTotal(data, first, last, zoom), pos, neg
}

// bucketTotal is what dt_quantize_total makes of first..last: the sum of
// |data[i]| in long double, or with aggzoom the largest |data[i]| over
// 0.95, so that the tallest bar nearly fills the line.
func bucketTotal(data []int64, first, last int, zoom bool) *big.Float {
	total := longDouble()
	for i := first; i <= last; i++ {
		v := longDouble().SetInt64(data[i])
		v.Abs(v)
		if !zoom {
			total.Add(total, v)
			continue
		}
		v.Mul(v, longDouble().SetFloat64(1/zoomMax))
		if total.Cmp(v) < 0 {
			total = v
		}
	}
	return total
}

// trimRange finds the non-zero bins with one zero row kept on each side;
// ok is false when every bin is zero.
func trimRange(data []int64) (first, last int, ok bool) {
	last = len(data) - 1
	for first <= last && data[first] == 0 {
		first++
	}
	if first > last {
		return 0, 0, false
	}
	if first > 0 {
		first--
	}
	for last > 0 && data[last] == 0 {
		last--
	}
	if last < len(data)-1 {
		last++
	}
	return first, last, true
}

// Histogram returns the text dtrace prints for a quantize(), lquantize()
// or llquantize() value: a leading newline, the header and one row per
// bucket in range.
func (d *Desc) Histogram(data []int64, normal uint64) string {
	return d.histogram(data, normal, View{})
}

// histogram is Histogram under the aggzoom and encoding options.
func (d *Desc) histogram(data []int64, normal uint64, v View) string {
	if normal == 0 {
		normal = 1
	}
	if n := d.NSlots(); len(data) < n {
		data = append(append([]int64(nil), data...), make([]int64, n-len(data))...)
	}
	var b strings.Builder
	switch d.Func {
	case program.AggQuantize:
		first, last, ok := trimRange(data)
		if !ok {
			first, last = program.QuantizeZero-1, program.QuantizeZero+1
		}
		total, pos, neg := signs(data, first, last, v.Zoom)
		histHeader(&b)
		for i := first; i <= last; i++ {
			fmt.Fprintf(&b, "%16d ", program.QuantizeBucketValue(i))
			quantLine(&b, data[i], normal, total, pos, neg, v.UTF8)
		}
	case program.AggLquantize:
		levels := int(d.Levels)
		first, last, ok := trimRange(data)
		if !ok {
			first, last = 0, min(2, len(data)-1)
		}
		total, pos, neg := signs(data, first, last, v.Zoom)
		histHeader(&b)
		base, step := int(d.Base), int(d.Step)
		for i := first; i <= last; i++ {
			switch i {
			case 0:
				fmt.Fprintf(&b, "%16s ", fmt.Sprintf("< %d", base))
			case levels + 1:
				fmt.Fprintf(&b, "%16s ", fmt.Sprintf(">= %d", base+levels*step))
			default:
				fmt.Fprintf(&b, "%16d ", base+(i-1)*step)
			}
			quantLine(&b, data[i], normal, total, pos, neg, v.UTF8)
		}
	case program.AggLlquantize:
		if d.llqValid() {
			d.llqHistogram(&b, data, normal, v)
		}
	}
	return b.String()
}

// llqHistogram is dt_print_llquantize, labels and "ghost bins" included.
func (d *Desc) llqHistogram(b textWriter, data []int64, normal uint64, v View) {
	factor, lmag, hmag, steps := int(d.Factor), int(d.Lmag), int(d.Hmag), int(d.Steps)
	sf := steps / factor
	bin0 := d.llqZero()
	nbins := d.llqBins()
	first, last := 0, nbins-1
	for first <= last && data[first] == 0 {
		first++
	}
	if first > last {
		first, last = bin0+1, bin0+1
	} else {
		for data[last] == 0 {
			last--
		}
	}
	total, pos, neg := signs(data, first, last, v.Zoom)
	histHeader(b)
	if first > 0 {
		first--
	}
	if last < nbins-1 {
		last++
	}
	pad := 0
	if lmag == 0 && steps > factor {
		pad = sf
	}
	labels := make([]string, last-first+1+2*pad)
	set := func(i int, s string) {
		if len(s) > 15 {
			s = s[:15] // dtrace formats labels into 16-byte buffers
		}
		if i >= first-pad && i <= last+pad {
			labels[i-first+pad] = s
		}
	}
	scale := ipow(uint64(factor), uint64(lmag))
	switch {
	case scale == 1:
		set(bin0, "0")
	case first >= bin0:
		set(bin0, fmt.Sprintf("< %d", scale))
	default:
		set(bin0, fmt.Sprintf("abs() < %d", scale))
	}
	set(bin0-1, fmt.Sprintf("-%d", scale))
	set(bin0+1, fmt.Sprintf("%d", scale))
	mag := lmag
	i := 1
	if lmag == 0 && steps > factor {
		for step := 2; step <= factor; step++ {
			i += sf
			set(bin0-i, fmt.Sprintf("-%d", step))
			set(bin0+i, fmt.Sprintf("%d", step))
		}
		mag++
	}
	scale = ipow(uint64(factor), uint64(mag+1)) / uint64(steps)
	for ; mag <= hmag; mag++ {
		for step := sf + 1; step <= steps; step++ {
			i++
			set(bin0-i, fmt.Sprintf("-%d", uint64(step)*scale))
			set(bin0+i, fmt.Sprintf("%d", uint64(step)*scale))
		}
		scale *= uint64(factor)
	}
	scale = ipow(uint64(factor), uint64(hmag+1))
	set(0, fmt.Sprintf("<= -%d", scale))
	set(nbins-1, fmt.Sprintf(">= %d", scale))
	if pad > 0 {
		// A first or last bin that no label names takes the nearest
		// label outside the range.
		j := pad
		if labels[j] == "" {
			k := 1
			for ; k < pad; k++ {
				if labels[j-k] != "" {
					break
				}
			}
			if k < pad {
				labels[j] = labels[j-k]
			}
		}
		j = last - first + pad
		if labels[j] == "" {
			k := 1
			for ; k < pad; k++ {
				if labels[j+k] != "" {
					break
				}
			}
			if k < pad {
				labels[j] = labels[j+k]
			}
		}
	}
	for i := first; i <= last; i++ {
		l := labels[i-first+pad]
		if l == "" {
			continue
		}
		fmt.Fprintf(b, "%16s ", l)
		quantLine(b, data[i], normal, total, pos, neg, v.UTF8)
	}
}
