package aggregate

import (
	"math/big"
	"math/bits"
)

// addTo128 adds (hi, lo) to the 128-bit value in s[0] (low) and s[1]
// (high).
func addTo128(s []int64, lo, hi uint64) {
	l, c := bits.Add64(uint64(s[0]), lo, 0)
	h, _ := bits.Add64(uint64(s[1]), hi, c)
	s[0], s[1] = int64(l), int64(h)
}

func big128(lo, hi uint64) *big.Int {
	x := new(big.Int).SetUint64(hi)
	x.Lsh(x, 64)
	return x.Or(x, new(big.Int).SetUint64(lo))
}

// stddev is dtrace's dt_stddev: sqrt(avg(x^2) - avg(x)^2) in integer
// arithmetic, with the average of squares from the 128-bit sum.
func stddev(s []int64, normal uint64) uint64 {
	if s[0] == 0 {
		return 0
	}
	if normal == 0 {
		normal = 1
	}
	avgsq := big128(uint64(s[2]), uint64(s[3]))
	avgsq.Quo(avgsq, new(big.Int).SetUint64(normal))
	avgsq.Quo(avgsq, new(big.Int).SetUint64(uint64(s[0])))
	avg := s[1] / int64(normal) / s[0]
	if avg < 0 {
		avg = -avg
	}
	sq := new(big.Int).SetUint64(uint64(avg))
	sq.Mul(sq, sq)
	diff := avgsq.Sub(avgsq, sq)
	if diff.Sign() < 0 {
		// dtrace's 128-bit subtraction wraps.
		diff.Add(diff, new(big.Int).Lsh(big.NewInt(1), 128))
	}
	r := diff.Sqrt(diff)
	return r.Uint64()
}
