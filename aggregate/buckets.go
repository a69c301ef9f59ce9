package aggregate

import (
	"math"

	"github.com/dtrace-go/dtrace/program"
)

// Buckets lists a quantization's non-empty buckets as [low, high, count]
// (normalized), low and high inclusive.
func Buckets(a *Agg, e *Entry) [][3]int64 {
	d := a.Desc
	normal := int64(max(a.Normal, 1))
	var out [][3]int64
	for i, n := range e.Data {
		if i >= d.NSlots() {
			break
		}
		if n == 0 {
			continue
		}
		lo, hi := BucketRange(d, i)
		out = append(out, [3]int64{lo, hi, n / normal})
	}
	return out
}

// BucketRange gives the values bucket i of a quantize(), lquantize() or
// llquantize() aggregation holds: the smallest and largest v whose bucket
// is i, found by bisection over the function's (monotonic) bucket.
func BucketRange(d *Desc, i int) (lo, hi int64) {
	var bucket func(int64) int
	switch d.Func {
	case program.AggQuantize:
		bucket = program.QuantizeBucket
	case program.AggLquantize:
		bucket = func(v int64) int { return program.LquantizeBucket(v, d.Base, d.Levels, d.Step) }
	default:
		bucket = func(v int64) int { return program.LlquantizeBucket(v, d.Factor, d.Lmag, d.Hmag, d.Steps) }
	}
	lo, hi = firstAtLeast(bucket, i), math.MaxInt64
	if bucket(math.MaxInt64) > i {
		hi = firstAtLeast(bucket, i+1) - 1
	}
	return lo, hi
}

// firstAtLeast is the smallest v with bucket(v) >= i, MaxInt64 if none.
// It bisects over the values ordered as unsigned numbers with the sign bit
// flipped, which keeps their order and avoids overflow.
func firstAtLeast(bucket func(int64) int, i int) int64 {
	const flip = 1 << 63
	at := func(u uint64) int { return bucket(int64(u ^ flip)) }
	if at(0) >= i {
		return math.MinInt64
	}
	lo, hi := uint64(0), uint64(math.MaxUint64) // at(lo) < i
	if at(hi) < i {
		return math.MaxInt64
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if at(mid) >= i {
			hi = mid
		} else {
			lo = mid
		}
	}
	return int64(hi ^ flip)
}
