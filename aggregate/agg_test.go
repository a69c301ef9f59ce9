package aggregate

import (
	"math"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/program"
)

func TestQuantizeBucket(t *testing.T) {
	tests := []struct {
		v    int64
		want int
	}{
		{0, 63}, {1, 64}, {2, 65}, {3, 65}, {4, 66}, {1023, 73}, {1024, 74},
		{-1, 62}, {-2, 61}, {-3, 61}, {math.MaxInt64, 126}, {math.MinInt64, 0}, {math.MinInt64 + 1, 0},
	}
	for _, tt := range tests {
		if got := program.QuantizeBucket(tt.v); got != tt.want {
			t.Errorf("QuantizeBucket(%d) = %d, want %d", tt.v, got, tt.want)
		}
		if b := program.QuantizeBucket(tt.v); tt.v > 0 && program.QuantizeBucketValue(b) > tt.v {
			t.Errorf("bucket %d of %d starts at %d", b, tt.v, program.QuantizeBucketValue(b))
		}
	}
	if program.QuantizeBucketValue(0) != -(1<<62) || program.QuantizeBucketValue(126) != 1<<62 || program.QuantizeBucketValue(63) != 0 {
		t.Errorf("QuantizeBucketValue ends: %d %d", program.QuantizeBucketValue(0), program.QuantizeBucketValue(126))
	}
}

func TestLquantizeBucket(t *testing.T) {
	// lquantize(v, -100, 1100, 100): 12 levels.
	tests := []struct {
		v    int64
		want int
	}{
		{-101, 0}, {-100, 1}, {-1, 1}, {0, 2}, {99, 2}, {100, 3}, {1099, 12}, {1100, 13}, {math.MaxInt64, 13}, {math.MinInt64, 0},
	}
	for _, tt := range tests {
		if got := program.LquantizeBucket(tt.v, -100, 12, 100); got != tt.want {
			t.Errorf("LquantizeBucket(%d) = %d, want %d", tt.v, got, tt.want)
		}
	}
}

func TestLlquantizeBucket(t *testing.T) {
	// llquantize(v, 10, 0, 2, 20): per side (2-0+1)*(20-2) = 54 bins,
	// underflow at 55, 111 bins.
	d := &Desc{Func: program.AggLlquantize, Factor: 10, Lmag: 0, Hmag: 2, Steps: 20}
	if n := d.NSlots(); n != 111 {
		t.Fatalf("NSlots = %d, want 111", n)
	}
	tests := []struct {
		v    int64
		want int
	}{
		{0, 55}, {1, 56}, {2, 58}, {9, 72}, {10, 74}, {15, 75}, {99, 91}, {100, 92}, {999, 109}, {1000, 110}, {1 << 40, 110},
		{-1, 54}, {-2, 52}, {-1000, 0},
	}
	for _, tt := range tests {
		if got := program.LlquantizeBucket(tt.v, 10, 0, 2, 20); got != tt.want {
			t.Errorf("LlquantizeBucket(%d) = %d, want %d", tt.v, got, tt.want)
		}
	}
}

func TestMergeMinMax(t *testing.T) {
	d := &Desc{Func: program.AggMin}
	dst := make([]int64, 2)
	d.Merge(dst, []int64{0, 0}) // a CPU that never fired
	d.Merge(dst, []int64{5, 2})
	d.Merge(dst, []int64{0, 0})
	d.Merge(dst, []int64{7, 1})
	if d.Scalar(dst) != 5 {
		t.Errorf("min = %d, want 5", d.Scalar(dst))
	}
	if v := d.Scalar([]int64{0, 0}); v != math.MaxInt64 {
		t.Errorf("unfired min = %d", v)
	}
	mx := &Desc{Func: program.AggMax}
	dst = make([]int64, 2)
	mx.Merge(dst, []int64{-5, 1})
	mx.Merge(dst, []int64{0, 0})
	if mx.Scalar(dst) != -5 {
		t.Errorf("max = %d, want -5", mx.Scalar(dst))
	}
}

func TestStddevCarry(t *testing.T) {
	d := &Desc{Func: program.AggStddev}
	a, b := make([]int64, 4), make([]int64, 4)
	d.Update(a, math.MaxInt64, 1)
	d.Update(b, math.MaxInt64, 1)
	d.Merge(a, b)
	// 2 * (2^63-1)^2 = 2^127 - 2^65 + 2.
	if uint64(a[2]) != 2 || uint64(a[3]) != 1<<63-2 {
		t.Errorf("sum of squares = %#x:%#x", uint64(a[3]), uint64(a[2]))
	}
}

// aggs/tst.stddev.d
func TestStddevCorpus(t *testing.T) {
	fa := newFire(&Desc{ID: 1, Func: program.AggStddev})
	fb := newFire(&Desc{ID: 2, Func: program.AggStddev})
	for i := int64(0); i < 10; i++ {
		fa.on(int(i%2), nil, 5000000000+100*i, 1)
		fb.on(int(i%2), nil, -5000000000-100*i, 1)
	}
	got := "\n" + printAll(t, &Printer{}, fa.snap(), fb.snap())
	diff(t, "tst.stddev", got, corpus(t, "aggs/tst.stddev.r"))
}

// aggs/tst.avg_neg.d
func TestAvgNeg(t *testing.T) {
	f := newFire(&Desc{ID: 1, Func: program.AggAvg})
	f.on(0, nil, 0, 1)
	f.on(1, nil, -900, 1)
	diff(t, "tst.avg_neg", "\n"+printAll(t, &Printer{}, f.snap()), corpus(t, "aggs/tst.avg_neg.r"))
}

// aggs/tst.multiaggs2.d: i = 0, 100, ..., 900 into six aggregations.
func TestMultiaggs2(t *testing.T) {
	ds := []*Desc{
		{ID: 1, Func: program.AggAvg}, {ID: 2, Func: program.AggSum}, {ID: 3, Func: program.AggMin}, {ID: 4, Func: program.AggMax},
		{ID: 5, Func: program.AggQuantize}, {ID: 6, Func: program.AggLquantize, Base: 0, Levels: 10, Step: 100},
	}
	var aggs []*Agg
	for _, d := range ds {
		f := newFire(d)
		for i := int64(0); i < 1000; i += 100 {
			f.on(int(i/100)%2, nil, i, 1)
		}
		aggs = append(aggs, f.snap())
	}
	// Printing order follows the ids, not the slice order.
	aggs[0], aggs[5] = aggs[5], aggs[0]
	diff(t, "tst.multiaggs2", "\n"+printAll(t, &Printer{}, aggs...), corpus(t, "aggs/tst.multiaggs2.r"))
}

// aggs/tst.quantize.d and tst.lquantize.d: keyed histograms at exit.
func TestKeyedHistograms(t *testing.T) {
	for _, tt := range []struct {
		name string
		d    *Desc
	}{
		{"aggs/tst.quantize.r", &Desc{ID: 1, Func: program.AggQuantize}},
		{"aggs/tst.lquantize.r", &Desc{ID: 1, Func: program.AggLquantize, Base: -100, Levels: 12, Step: 100}},
	} {
		f := newFire(tt.d)
		for i := 0; i < 1000; i += 100 {
			f.on(0, k(i32(i)), int64(i), 1)
		}
		diff(t, tt.name, "\n"+printAll(t, &Printer{}, f.snap()), corpus(t, tt.name))
	}
}

// aggs/tst.signedkeys.d with aggsortkey: keys sort as unsigned bytes.
func TestSignedKeys(t *testing.T) {
	var aggs []*Agg
	for id, size := range []int{1, 2, 4, 8} {
		f := newFire(&Desc{ID: id + 1, Func: program.AggSum})
		for v := int64(-2); v <= 2; v++ {
			f.on(0, k(program.Int{Bits: uint64(v), Size: size, Signed: true}), v, 1)
		}
		aggs = append(aggs, f.snap())
	}
	want := corpus(t, "aggs/tst.signedkeys.r")
	want = want[strings.Index(want, "   0                0"):]
	diff(t, "tst.signedkeys", printAll(t, &Printer{Sort: SortOptions{Key: true}}, aggs...), want)
}

// aggs/tst.normalize.d
func TestNormalize(t *testing.T) {
	fa := newFire(&Desc{ID: 1, Func: program.AggSum})
	fb := newFire(&Desc{ID: 2, Func: program.AggSum})
	for i := int64(0); i < 20; i++ {
		fa.on(0, nil, i*100, 1)
		fb.on(1, nil, i*100, 1)
	}
	a, b := fa.snap(), fb.snap()
	a.Normalize(5)
	diff(t, "tst.normalize", "\n"+printAll(t, &Printer{}, a, b), corpus(t, "aggs/tst.normalize.r"))
}

// aggs/tst.fmtnormalize.d
func TestFmtNormalize(t *testing.T) {
	f := newFire(&Desc{ID: 1, Func: program.AggSum})
	for i := int64(0); i < 20; i++ {
		f.on(int(i%2), k(i32(int(i%5))), i*100, 1)
	}
	a := f.snap()
	a.Normalize(5)
	got := "normalized data:\n" + printa(t, &Printer{}, "%u %@u\n", a)
	diff(t, "tst.fmtnormalize", got+"\n", corpus(t, "aggs/tst.fmtnormalize.r"))
	if !a.Printed {
		t.Errorf("printa did not mark the aggregation printed")
	}
	if out := printAll(t, &Printer{}, a); out != "" {
		t.Errorf("printed aggregation printed again at exit: %q", out)
	}
}

// aggs/tst.trunc.d, tst.negtrunc.d, tst.trunc-one.d
func TestTrunc(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    int64
	}{{"aggs/tst.trunc.r", 10}, {"aggs/tst.negtrunc.r", -10}} {
		f := newFire(&Desc{ID: 1, Func: program.AggSum})
		for i := 0; i < 100; i++ {
			f.on(i%2, k(i32(i)), int64(i), 1)
		}
		a := f.snap()
		removed := a.Trunc(tt.n)
		if len(removed) != 90 || a.Len() != 10 {
			t.Errorf("%s: removed %d, kept %d", tt.name, len(removed), a.Len())
		}
		diff(t, tt.name, "\n"+printAll(t, &Printer{}, a), corpus(t, tt.name))
	}

	var aggs []*Agg
	for i, vals := range [][]int64{{100, 20, 3}, {400, 50, 6}, {700, 80, 9}} {
		f := newFire(&Desc{ID: i + 1, Func: program.AggSum})
		for j, v := range vals {
			f.on(0, k(i32(3*i+j+1)), v, 1)
		}
		aggs = append(aggs, f.snap())
	}
	aggs[1].Trunc(0)
	p := &Printer{}
	got := printa(t, p, "", aggs[0]) + printa(t, p, "", aggs[1]) + printa(t, p, "", aggs[2]) + "\n"
	diff(t, "tst.trunc-one", got, corpus(t, "aggs/tst.trunc-one.r"))
}

// aggs/tst.clear.d: cleared keys stay and print zero.
func TestClear(t *testing.T) {
	f := newFire(&Desc{ID: 1, Func: program.AggSum})
	i := int64(0)
	for ; i < 10; i++ {
		f.on(0, k(i32(int(i%5))), i*100, 1)
	}
	a := f.snap()
	p := &Printer{}
	got := "Aggregation data before clear():\n" + printa(t, p, "", a)
	a.Clear()
	f.cpus = map[int]map[string]*cpuVal{} // the kernel side cleared too
	for j := 0; j < 5; j++ {
		f.on(0, k(i32(j)), 0, 1)
	}
	got += "Aggregation data after clear():\n" + printa(t, p, "", f.snap())
	i++
	for n := 0; n < 9; n, i = n+1, i+1 {
		f.on(0, k(i32(int(i%5))), i*100, 1)
	}
	got += "Final aggregation data:\n" + printa(t, p, "", f.snap()) + "\n"
	diff(t, "tst.clear", got, corpus(t, "aggs/tst.clear.r"))
}

func TestPerCPU(t *testing.T) {
	a := New(&Desc{ID: 1, Func: program.AggSum})
	a.PerCPU = true
	a.AddCPU(k(i32(7)), 0, []int64{5})
	a.AddCPU(k(i32(7)), 2, []int64{3})
	var b strings.Builder
	if err := (&Printer{CPUs: []int{0, 1, 2}}).PrintAll(&b, []*Agg{a}); err != nil {
		t.Fatal(err)
	}
	want := "        7                8\n    [CPU 0]                5\n    [CPU 1]                0\n    [CPU 2]                3\n"
	if b.String() != want {
		t.Errorf("got %q want %q", b.String(), want)
	}
	m := New(&Desc{ID: 2, Func: program.AggMin})
	m.PerCPU = true
	m.AddCPU(nil, 1, []int64{-4, 1})
	b.Reset()
	if err := (&Printer{CPUs: []int{0, 1}}).PrintAll(&b, []*Agg{m}); err != nil {
		t.Fatal(err)
	}
	want = "               -4\n    [CPU 0] 9223372036854775807\n    [CPU 1]               -4\n"
	if b.String() != want {
		t.Errorf("got %q want %q", b.String(), want)
	}
}
