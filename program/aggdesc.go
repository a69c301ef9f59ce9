package program

import (
	"fmt"
	"math"
	"math/bits"
)

// AggFunc is an aggregating function.
type AggFunc int

// The aggregating functions of D.
const (
	AggCount AggFunc = iota + 1
	AggSum
	AggMin
	AggMax
	AggAvg
	AggStddev
	AggQuantize
	AggLquantize
	AggLlquantize
)

var funcNames = [...]string{"", "count", "sum", "min", "max", "avg", "stddev", "quantize", "lquantize", "llquantize"}

// AggFuncNamed returns the aggregating function of D name name
// ("lquantize"), 0 if there is none. The checker's builtin table names
// the same functions (a test there pins it).
func AggFuncNamed(name string) AggFunc {
	for f := AggCount; f <= AggLlquantize; f++ {
		if funcNames[f] == name {
			return f
		}
	}
	return 0
}

// String returns the function's D name ("lquantize").
func (f AggFunc) String() string {
	if f > 0 && int(f) < len(funcNames) {
		return funcNames[f]
	}
	return fmt.Sprintf("AggFunc(%d)", int(f))
}

// AggDesc describes one aggregation variable: its function and the
// function's constant parameters. The checker fills it; codegen sizes
// the map value from NSlots; the consumer merges and prints with it.
type AggDesc struct {
	// ID is the aggregation variable id. Aggregations print at exit in
	// ID order.
	ID   int
	Name string
	Func AggFunc
	// Base, Levels and Step are lquantize()'s parameters: Levels is
	// (limit - base) / step.
	Base   int32
	Levels uint16
	Step   uint16
	// Factor, Lmag, Hmag and Steps are llquantize()'s parameters.
	Factor uint16
	Lmag   uint16
	Hmag   uint16
	Steps  uint16
}

// QuantizeBuckets is the number of quantize() buckets; bucket
// QuantizeZero counts zeros.
const (
	QuantizeBuckets = 127
	QuantizeZero    = 63
)

// NSlots returns the number of int64 slots in the function's per-CPU
// value (see the package documentation for the layouts).
func (d *AggDesc) NSlots() int {
	switch d.Func {
	case AggCount, AggSum:
		return 1
	case AggMin, AggMax:
		return 2
	case AggAvg:
		return 2
	case AggStddev:
		return 4
	case AggQuantize:
		return QuantizeBuckets
	case AggLquantize:
		return int(d.Levels) + 2
	case AggLlquantize:
		return d.LlqBins()
	}
	return 0
}

// LlqPerSide is the number of log-linear bins on each side of zero.
func (d *AggDesc) LlqPerSide() int {
	if !d.LlqValid() {
		return 0
	}
	sf := int(d.Steps) / int(d.Factor)
	return (int(d.Hmag) - int(d.Lmag) + 1) * (int(d.Steps) - sf)
}

// LlqBins is the number of llquantize bins: both sides, the underflow
// bin and the two overflow bins.
func (d *AggDesc) LlqBins() int { return 2*d.LlqPerSide() + 3 }

// LlqValid reports whether the llquantize parameters are usable; the
// checker rejects the others, this only keeps bad input from panicking.
func (d *AggDesc) LlqValid() bool {
	f, steps := uint64(d.Factor), uint64(d.Steps)
	if f < 2 || steps == 0 || d.Hmag < d.Lmag {
		return false
	}
	// factor^(hmag+1) must fit in 64 bits.
	p := uint64(1)
	for i := 0; i <= int(d.Hmag); i++ {
		hi, lo := bits.Mul64(p, f)
		if hi != 0 {
			return false
		}
		p = lo
	}
	switch {
	case steps < f:
		return f%steps == 0
	case steps > f:
		if steps%f != 0 {
			return false
		}
		if d.Lmag == 0 {
			return (f*f)%steps == 0
		}
		return ipow(f, uint64(d.Lmag)+1)%steps == 0
	}
	return true
}

// LlqZero is the index of the llquantize underflow bin (|v| < factor^lmag).
func (d *AggDesc) LlqZero() int { return 1 + d.LlqPerSide() }

// QuantizeBucket returns the quantize() bucket of v: QuantizeZero for 0,
// QuantizeZero+k for 2^(k-1) <= v < 2^k, QuantizeZero-k for the negative
// mirror, 0 for math.MinInt64.
func QuantizeBucket(v int64) int {
	if v == 0 {
		return QuantizeZero
	}
	if v == math.MinInt64 {
		return 0
	}
	t := v
	if t < 0 {
		t = -t
	}
	off := 1
	for t > 1 {
		t >>= 1
		off++
	}
	if v < 0 {
		return QuantizeZero - off
	}
	return QuantizeZero + off
}

// QuantizeBucketValue returns the lower bound printed for bucket i.
func QuantizeBucketValue(i int) int64 {
	switch {
	case i < QuantizeZero:
		return -(int64(1) << uint(QuantizeZero-1-i))
	case i == QuantizeZero:
		return 0
	}
	return int64(1) << uint(i-QuantizeZero-1)
}

// LquantizeBucket returns the lquantize() bucket of v: 0 below base,
// levels+1 at or above base+levels*step, else 1+(v-base)/step.
func LquantizeBucket(v int64, base int32, levels, step uint16) int {
	if step == 0 || v < int64(base) {
		return 0
	}
	level := uint64(v-int64(base)) / uint64(step)
	if level > uint64(levels) {
		level = uint64(levels)
	}
	return int(level) + 1
}

// LlquantizeBucket returns the llquantize() bucket of v, computed as
// dtrace's BPF code does: bin 0 is the negative overflow, then the
// negative log-linear bins, the underflow bin (|v| < factor^lmag), the
// positive bins and the positive overflow.
func LlquantizeBucket(v int64, factor, lmag, hmag, steps uint16) int {
	d := AggDesc{Factor: factor, Lmag: lmag, Hmag: hmag, Steps: steps}
	under := d.LlqZero()
	if !d.LlqValid() {
		return under
	}
	tmp := uint64(v)
	if v < 0 {
		tmp = uint64(-v)
	}
	max := ipow(uint64(factor), uint64(lmag))
	if tmp < max {
		return under
	}
	sf := uint64(steps) / uint64(factor)
	mag := uint64(lmag)
	var ind uint64
	for {
		max *= uint64(factor)
		if tmp < max {
			ind = tmp
			if mag != 0 {
				ind /= max / uint64(steps)
			} else {
				ind = ind * uint64(steps) / max
			}
			ind -= sf
			break
		}
		mag++
		if mag > uint64(hmag) {
			break
		}
	}
	bin := int64((mag-uint64(lmag))*(uint64(steps)-sf) + ind + 1)
	if v < 0 {
		bin = -bin
	}
	return int(bin) + under
}

func ipow(b, e uint64) uint64 {
	r := uint64(1)
	for ; e > 0; e-- {
		r *= b
	}
	return r
}

// Update applies one firing of the aggregating function with argument v
// (and increment incr for the quantizing functions) to a per-CPU value.
// It is the reference for the code codegen emits.
func (d *AggDesc) Update(slots []int64, v, incr int64) {
	if len(slots) < d.NSlots() {
		return
	}
	switch d.Func {
	case AggCount:
		slots[0]++
	case AggSum:
		slots[0] += v
	case AggMin:
		if slots[1] == 0 || v < slots[0] {
			slots[0] = v
		}
		slots[1]++
	case AggMax:
		if slots[1] == 0 || v > slots[0] {
			slots[0] = v
		}
		slots[1]++
	case AggAvg:
		slots[0]++
		slots[1] += v
	case AggStddev:
		slots[0]++
		slots[1] += v
		a := uint64(v)
		if v < 0 {
			a = uint64(-v)
		}
		hi, lo := bits.Mul64(a, a)
		addTo128(slots[2:4], lo, hi)
	case AggQuantize:
		slots[QuantizeBucket(v)] += incr
	case AggLquantize:
		slots[LquantizeBucket(v, d.Base, d.Levels, d.Step)] += incr
	case AggLlquantize:
		slots[LlquantizeBucket(v, d.Factor, d.Lmag, d.Hmag, d.Steps)] += incr
	}
}

// addTo128 adds (hi, lo) to the 128-bit value in s[0] (low) and s[1]
// (high): stddev's sum of squares.
func addTo128(s []int64, lo, hi uint64) {
	l, c := bits.Add64(uint64(s[0]), lo, 0)
	h, _ := bits.Add64(uint64(s[1]), hi, c)
	s[0], s[1] = int64(l), int64(h)
}
