package aggregate

import (
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/program"
)

// negWeights replays the increments of tst.negorder.d, tst.lquantzero.d
// and tst.quantzero.d: -12, -11, ..., 12 without 0, in dtrace's order.
func negWeights() []int64 {
	a, b := int64(7), int64(13)
	val := -a*b + a
	var out []int64
	for {
		incr := val % b
		val += a
		if val == 0 {
			val += a
		}
		if incr == 0 {
			return out
		}
		out = append(out, incr)
	}
}

// aggs/tst.lquantzero.d: where zero falls relative to the range decides
// the tie-breaking weight.
func TestLquantizeZero(t *testing.T) {
	ranges := []struct {
		title       string
		base, limit int32
		step        uint16
	}{
		{"Zero below the range:", 10, 20, 1},
		{"Zero just below the range:", 1, 20, 5},
		{"Zero at the bottom of the range:", 0, 20, 1},
		{"Zero within the range:", -10, 10, 1},
		{"Zero at the top of the range:", -10, 0, 1},
		{"Zero just above the range:", -10, -1, 1},
		{"Zero above the range:", -10, -2, 1},
	}
	var b strings.Builder
	p := &Printer{}
	for i, r := range ranges {
		f := newFire(&Desc{ID: i + 1, Func: program.AggLquantize, Base: r.base, Levels: uint16((r.limit - r.base) / int32(r.step)), Step: r.step})
		for n, incr := range negWeights() {
			f.on(0, k(program.I64(int64(n+1))), 0, incr)
		}
		b.WriteString(r.title + "\n" + printa(t, p, "", f.snap()) + "\n")
	}
	b.WriteString("\n")
	diff(t, "tst.lquantzero", b.String(), corpus(t, "aggs/tst.lquantzero.r"))
}

// aggs/tst.quantzero.d
func TestQuantizeZero(t *testing.T) {
	f := newFire(&Desc{ID: 1, Func: program.AggQuantize})
	for n, incr := range negWeights() {
		f.on(0, k(program.I64(int64(n+1))), 0, incr)
	}
	p := &Printer{}
	got := printa(t, p, "", f.snap()) + "\n"
	diff(t, "tst.quantzero", got, corpus(t, "aggs/tst.quantzero.r"))
}

// aggs/tst.stddev2.d: stddev through %@x.
func TestStddevHex(t *testing.T) {
	pairs := [][2]int64{{0, 0}, {0x10, 0x20}, {0x100, 0x200}, {0x1000, 0x2000}, {0x10000, 0x20000},
		{0x100000, 0x200000}, {0x1000000, 0x2000000}, {0x10000000, 0x20000000}, {0x20000000, 0x40000000},
		{0x40000000, 0x80000000}, {0x80000000, 0x100000000}, {0x100000000, 0x200000000}}
	var b strings.Builder
	p := &Printer{}
	var aggs []*Agg
	for i, pr := range pairs {
		f := newFire(&Desc{ID: i + 1, Func: program.AggStddev})
		f.on(0, nil, pr[0], 1)
		f.on(1, nil, pr[1], 1)
		aggs = append(aggs, f.snap())
		b.WriteString(printa(t, p, "%9@x\n", aggs[i]))
	}
	b.WriteString("\n" + printAll(t, p, aggs...))
	diffSorted(t, "tst.stddev2", b.String(), corpus(t, "aggs/tst.stddev2.r"))
}

// aggs/tst.allquant.d: every power of two, both signs, plus one.
func TestAllQuant(t *testing.T) {
	f := newFire(&Desc{ID: 1, Func: program.AggQuantize})
	for i := 0; i < 64; i++ {
		v := int64(1) << uint(i)
		for _, x := range []int64{v, v + 1, -v, -v - 1} {
			f.on(i%2, nil, x, 1)
		}
	}
	diff(t, "tst.allquant", "\n"+printAll(t, &Printer{}, f.snap()), corpus(t, "aggs/tst.allquant.r"))
}

// aggs/tst.llquantneg.d and tst.llquantincr.d
func TestLlquantizeIncrements(t *testing.T) {
	for _, tt := range []struct {
		name string
		incr func(i int64) int64
	}{
		{"aggs/tst.llquantneg.r", func(i int64) int64 {
			if i%2 == 0 {
				return 1
			}
			return -1
		}},
		{"aggs/tst.llquantincr.r", func(int64) int64 { return 2 }},
	} {
		f := newFire(&Desc{ID: 1, Func: program.AggLlquantize, Factor: 10, Lmag: 0, Hmag: 6, Steps: 20})
		for i := int64(0); i < 1500; i++ {
			f.on(int(i%2), nil, i, tt.incr(i))
		}
		diff(t, tt.name, "\n"+printAll(t, &Printer{}, f.snap()), corpus(t, tt.name))
	}
}
