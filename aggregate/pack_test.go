package aggregate

import (
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/program"
)

// quantPair is @a["foo"] = quantize(1), quantize(100) twice and
// @a["bar"] = quantize(7), quantize(3000).
func quantPair() *Agg {
	f := newFire(&Desc{ID: 1, Func: program.AggQuantize})
	f.on(0, k(str("foo")), 1, 1)
	f.on(0, k(str("foo")), 100, 2)
	f.on(1, k(str("bar")), 7, 1)
	f.on(1, k(str("bar")), 3000, 1)
	return f.snap()
}

// Buckets 63 (0) to 76 (4096) are printed: the lowest non-zero bucket of
// any key (64) less one and the highest (75) plus one.
func TestAggPackQuantize(t *testing.T) {
	header := "\n              key  min .--------------. max  | count\n"
	for _, c := range []struct {
		name     string
		view     View
		foo, bar string
	}{
		// foo's 1 of 3 and 2 of 3 both round to level 2 or 5 of 8.
		{"ascii", View{Pack: true}, " x     x      ", "   x        x "},
		{"utf8", View{Pack: true, PackUTF8: true}, " ▃     ▆      ", "   ▅        ▅ "},
		// With aggzoom the largest count of each key is the tallest bar.
		{"zoom", View{Pack: true, Zoom: true}, " x     X      ", "   X        X "},
	} {
		got := printa(t, &Printer{View: c.view}, "", quantPair())
		want := "\n" + header +
			"              foo    0 :" + c.foo + ": 4096 | 3\n" +
			"              bar    0 :" + c.bar + ": 4096 | 2\n"
		diff(t, "aggpack "+c.name, got, want)
	}
}

// Without keys the header has no key column; lquantize() shows its whole
// range, underflow and overflow buckets included.
func TestAggPackLquantize(t *testing.T) {
	f := newFire(&Desc{ID: 1, Func: program.AggLquantize, Base: 0, Levels: 5, Step: 2})
	f.on(0, nil, 3, 1)
	f.on(0, nil, -1, 1)
	f.on(0, nil, 3, 1)
	got := printa(t, &Printer{View: View{Pack: true}}, "", f.snap())
	want := "\n\n     min .-------. max      | count\n" +
		"     < 0 :x x    : >= 10    | 3\n"
	diff(t, "aggpack lquantize", got, want)
}

// agghist draws count() and sum() values as one histogram per
// aggregation; negative sums get bars left of the centre line.
func TestAggHist(t *testing.T) {
	fc := newFire(&Desc{ID: 1, Func: program.AggCount})
	fc.on(0, k(i32(1)), 0, 1)
	fc.on(0, k(i32(2)), 0, 1)
	fc.on(1, k(i32(2)), 0, 1)
	fs := newFire(&Desc{ID: 2, Func: program.AggSum})
	fs.on(0, k(i32(3)), -1, 1)
	fs.on(0, k(i32(4)), 5, 1)
	fq := newFire(&Desc{ID: 3, Func: program.AggMax})
	fq.on(0, k(i32(5)), 7, 1)
	hdr := "\n      key  ------------- Distribution ------------- count    \n"
	bar := func(n int) string { return strings.Repeat("@", n) }
	sp := func(n int) string { return strings.Repeat(" ", n) }
	got := printAll(t, &Printer{View: View{Hist: true}}, fc.snap(), fs.snap(), fq.snap())
	want := hdr +
		"        1 |" + bar(13) + sp(27) + " 1        \n" +
		"        2 |" + bar(27) + sp(13) + " 2        \n" +
		hdr +
		// Both signs: 20-column halves, 1 of 6 is 3 columns, 5 of 6 is 17.
		"        3 " + sp(17) + bar(3) + "|" + sp(20) + " -1       \n" +
		"        4 " + sp(20) + "|" + bar(17) + sp(3) + " 5        \n" +
		// max() is not drawn.
		"        5                7\n"
	diff(t, "agghist", got, want)

	// aggzoom: the total is the largest value over 0.95, truncated
	// (210), so 200 is 38 columns and 100 is 19.
	fz := newFire(&Desc{ID: 1, Func: program.AggSum})
	fz.on(0, k(i32(1)), 100, 1)
	fz.on(0, k(i32(2)), 200, 1)
	got = printa(t, &Printer{View: View{Hist: true, Zoom: true}}, "", fz.snap())
	want = "\n" + hdr +
		"        1 |" + bar(19) + sp(21) + " 100      \n" +
		"        2 |" + bar(38) + sp(2) + " 200      \n"
	diff(t, "agghist aggzoom", got, want)
}

// aggzoom and encoding=utf8 change ordinary histograms too.
func TestHistogramZoomUTF8(t *testing.T) {
	f := newFire(&Desc{ID: 1, Func: program.AggQuantize})
	f.on(0, nil, 1, 1)
	f.on(0, nil, 2, 3)
	a := f.snap()
	got := printa(t, &Printer{View: View{Zoom: true}}, "", a)
	if !strings.Contains(got, "|"+strings.Repeat("@", 38)+"   3") {
		t.Errorf("aggzoom: the largest bucket should be 38 of 40 columns:\n%s", got)
	}
	got = printa(t, &Printer{View: View{UTF8: true}}, "", a)
	// 3 of 4 is 30 whole blocks; 1 of 4 is 10.
	if !strings.Contains(got, "|"+strings.Repeat("█", 30)+strings.Repeat(" ", 10)+" 3") ||
		!strings.Contains(got, "|"+strings.Repeat("█", 10)+strings.Repeat(" ", 30)+" 1") {
		t.Errorf("encoding=utf8:\n%s", got)
	}
}

func TestNDigits(t *testing.T) {
	for _, c := range []struct {
		v    int64
		want int
	}{{0, 4}, {4096, 4}, {10000, 4}, {10001, 5}, {524288, 6}, {-1, 4}, {-100000, 6}, {-1 << 63, 20}} {
		if got := ndigits(c.v); got != c.want {
			t.Errorf("ndigits(%d) = %d, want %d", c.v, got, c.want)
		}
	}
}
