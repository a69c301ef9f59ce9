package aggregate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/program"
)

// printa/tst.basics.d: every function through a printa() format.
func TestPrintaBasics(t *testing.T) {
	type upd struct {
		d    *Desc
		vals []int64
		incr int64
	}
	ups := []upd{
		{&Desc{ID: 1, Name: "a", Func: program.AggAvg}, []int64{1}, 1},
		{&Desc{ID: 2, Name: "b", Func: program.AggCount}, []int64{0}, 1},
		{&Desc{ID: 3, Name: "c", Func: program.AggLquantize, Base: 1, Levels: 9, Step: 1}, []int64{1}, 1},
		{&Desc{ID: 4, Name: "d", Func: program.AggMax}, []int64{1}, 1},
		{&Desc{ID: 5, Name: "e", Func: program.AggMin}, []int64{1}, 1},
		{&Desc{ID: 6, Name: "f", Func: program.AggSum}, []int64{1}, 1},
		{&Desc{ID: 7, Name: "g", Func: program.AggQuantize}, []int64{1}, 1},
		{&Desc{ID: 8, Name: "h", Func: program.AggLlquantize, Factor: 10, Lmag: 0, Hmag: 5, Steps: 5}, []int64{320}, 8},
		{&Desc{ID: 9, Name: "i", Func: program.AggStddev}, []int64{10, 20}, 1},
	}
	convs := []string{"%@u", "%@u", "%@d", "%@u", "%@u", "%@u", "%@d", "%@d", "%@d"}
	p := &Printer{}
	var got strings.Builder
	var aggs []*Agg
	for i, u := range ups {
		f := newFire(u.d)
		for _, v := range u.vals {
			f.on(0, nil, v, u.incr)
		}
		a := f.snap()
		aggs = append(aggs, a)
		got.WriteString(printa(t, p, "@"+u.d.Name+" = "+convs[i]+"\n", a))
	}
	got.WriteString("\n" + printAll(t, p, aggs...))
	diff(t, "printa/tst.basics", got.String(), corpus(t, "printa/tst.basics.r"))
}

// printa/tst.def.d
func TestPrintaDefault(t *testing.T) {
	f := newFire(&Desc{ID: 1, Func: program.AggCount})
	f.on(0, nil, 0, 1)
	p := &Printer{}
	got := printa(t, p, "", f.snap()) + "\n" + printAll(t, p, f.agg)
	diff(t, "printa/tst.def", got, corpus(t, "printa/tst.def.r"))
}

// aggs/tst.llquantround.d
func TestLlquantizeRound(t *testing.T) {
	f := newFire(&Desc{ID: 1, Func: program.AggLlquantize, Factor: 10, Lmag: 0, Hmag: 2, Steps: 20})
	for i := 0; i < 2; i++ {
		f.on(0, nil, 0, 1)
	}
	for i := 0; i < 6; i++ {
		f.on(1, nil, 1, 1)
	}
	for i := 0; i < 19; i++ {
		f.on(i%2, nil, 2, 1)
	}
	diff(t, "tst.llquantround", "\n"+printAll(t, &Printer{}, f.snap()), corpus(t, "aggs/tst.llquantround.r"))
}

// aggs/tst.llquantize_basic.d: the parameter sets and values of the test.
func TestLlquantizeBasic(t *testing.T) {
	var got strings.Builder
	id := 0
	p := &Printer{}
	add := func(title string, d *Desc, pairs [][2]int64) {
		id++
		d.ID, d.Func = id, program.AggLlquantize
		f := newFire(d)
		for _, p := range pairs {
			f.on(0, nil, p[0], p[1])
		}
		got.WriteString(title + "\n" + printa(t, p, "", f.snap()))
	}
	basic := []int64{-20, -16, -12, -8, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 8, 12, 16, 20}
	pairs := func(vals []int64, base int64) [][2]int64 {
		var ps [][2]int64
		for _, v := range vals {
			ps = append(ps, [2]int64{v, base + v})
		}
		return ps
	}
	add("basicA (steps<factor)", &Desc{Factor: 4, Lmag: 0, Hmag: 1, Steps: 2}, pairs(basic, 100))
	add("basicB (steps==factor)", &Desc{Factor: 4, Lmag: 0, Hmag: 1, Steps: 4}, pairs(basic, 100))
	add("basicC (steps>factor)", &Desc{Factor: 4, Lmag: 0, Hmag: 1, Steps: 8}, pairs(basic, 100))
	add("basicD (steps>factor and bigger lmag)", &Desc{Factor: 4, Lmag: 4, Hmag: 6, Steps: 32}, [][2]int64{
		{-65536, 2}, {-16384, 4}, {-16384 + 1, 8}, {-4096 - 11*512, 16}, {-4096 - 11*512 + 1, 32},
		{-4096 - 10*512, 64}, {-4096 - 10*512 + 1, 128}, {-4096 - 9*512, 256}, {-4096 - 9*512 + 1, 512},
		{-4096 - 8*512, 1024}, {-4096 - 8*512 + 1, 1024}, {-4096 - 1*512 - 2, 2048}, {-4096 - 1*512 - 1, 4096},
		{-1024 - 12*128, 2048}, {-1024 - 12*128 + 1, 4096}, {-1024, 2048}, {-256 - 3*32, 1024},
		{-256 - 3*32 + 1, 512}, {-256, 256}, {-256 + 1, 128}, {256 - 1, 2}, {256, 256},
		{256 + 3*32 - 1, 512}, {256 + 3*32, 1024}, {1024, 2048}, {1024 + 12*128 - 1, 4096},
		{1024 + 12*128, 2048}, {4096 + 1*512 + 1, 4096}, {4096 + 1*512 + 2, 2048}, {4096 + 8*512 - 1, 1024},
		{4096 + 8*512, 1024}, {4096 + 9*512 - 1, 512}, {4096 + 9*512, 256}, {4096 + 10*512 - 1, 128},
		{4096 + 10*512, 64}, {4096 + 11*512 - 1, 32}, {4096 + 11*512, 16}, {16384 - 1, 8}, {16384, 4}, {65536, 2},
	})
	add("zero", &Desc{Factor: 2, Lmag: 0, Hmag: 1, Steps: 2}, [][2]int64{{0, 1}, {0, -1}})
	add("zeroB (lmag==0 && steps>factor)", &Desc{Factor: 2, Lmag: 0, Hmag: 1, Steps: 4}, [][2]int64{{0, 1}, {0, -1}})
	add("posvals", &Desc{Factor: 2, Lmag: 0, Hmag: 1, Steps: 2}, [][2]int64{{1, 1}})
	add("negvals", &Desc{Factor: 2, Lmag: 0, Hmag: 1, Steps: 2}, [][2]int64{{2, -1}})
	add("allvals", &Desc{Factor: 2, Lmag: 0, Hmag: 1, Steps: 2}, [][2]int64{{1, 1}, {2, -1}})
	single := []int64{-4, -3, -2, -1, 0, 1, 2, 3, 4}
	add("singlerangeA", &Desc{Factor: 4, Lmag: 0, Hmag: 0, Steps: 4}, pairs(single, 100))
	add("singlerangeB", &Desc{Factor: 4, Lmag: 0, Hmag: 0, Steps: 8}, pairs(single, 100))
	var logs [][2]int64
	for i, v := range []int64{-100000, -10000, -1000, -100, -10, -1, 0, 1, 10, 100, 1000, 10000, 100000} {
		logs = append(logs, [2]int64{v, 100108 + 100*int64(i)})
	}
	add("straightlog", &Desc{Factor: 10, Lmag: 0, Hmag: 3, Steps: 1}, logs)
	add("shift", &Desc{Factor: 2, Lmag: 0, Hmag: 1, Steps: 2}, [][2]int64{{-3, 1}, {3, 1}})
	add("ghostbin (lmag==0 && steps>factor); check ghost-bin problem", &Desc{Factor: 2, Lmag: 0, Hmag: 1, Steps: 4}, [][2]int64{{-1, 1}, {1, 1}})
	got.WriteString("\n")
	diff(t, "tst.llquantize_basic", got.String(), corpus(t, "aggs/tst.llquantize_basic.r"))
}

// aggs/tst.keysort.d: printa() under the aggsort options.
func TestKeysort(t *testing.T) {
	f := newFire(&Desc{ID: 1, Func: program.AggSum})
	i, j := 0, 0
	put := func(city string) {
		f.on(0, k(str(city), i32(i), i32(j)), int64(5-j), 1)
		i++
	}
	for _, group := range [][]string{{"Ghent"}, {"Berlin"}, {"London", "Dublin"}, {"Shanghai"}, {"Zurich"},
		{"Regina", "Winnipeg", "Edmonton", "Calgary", "Vancouver", "Victoria"}, {"Prague", "London"},
		{"Brisbane", "Sydney", "Melbourne"}, {"Amsterdam"}} {
		for _, c := range group {
			put(c)
		}
		j++
	}
	a := f.snap()
	p := &Printer{}
	const fm = "%20s %8d %8d %8@d\n"
	var b strings.Builder
	for _, s := range []struct {
		title string
		o     SortOptions
	}{
		{"By value:\n", SortOptions{}},
		{"\nBy key, position 0:\n", SortOptions{Key: true}},
		{"\nBy key, position 1:\n", SortOptions{Key: true, KeyPos: 1}},
		{"\nBy key, position 2:\n", SortOptions{Key: true, KeyPos: 2}},
		{"\nReversed by value:\n", SortOptions{Rev: true}},
		{"\nReversed by key, position 0:\n", SortOptions{Key: true, Rev: true}},
		{"\nReversed by key, position 1:\n", SortOptions{Key: true, Rev: true, KeyPos: 1}},
		{"\nReversed by key, position 2:\n", SortOptions{Key: true, Rev: true, KeyPos: 2}},
	} {
		p.Sort = s.o
		b.WriteString(s.title + printa(t, p, fm, a))
	}
	b.WriteString("\n")
	diff(t, "tst.keysort", b.String(), corpus(t, "aggs/tst.keysort.r"))
}

// aggs/tst.clearlquantize.d: string keys, cleared between printa()s.
func TestClearLquantize(t *testing.T) {
	fa := newFire(&Desc{ID: 1, Func: program.AggLquantize, Base: 0, Levels: 100, Step: 1})
	fb := newFire(&Desc{ID: 2, Func: program.AggQuantize})
	p := &Printer{Fmt: &format.Printer{StrSize: 256}}
	var b strings.Builder
	i := int64(0)
	for round := 0; round < 5; round++ {
		fa.cpus, fb.cpus = nil, nil
		fa.cpus, fb.cpus = map[int]map[string]*cpuVal{}, map[int]map[string]*cpuVal{}
		for n := 0; n < 5; n++ {
			i++
			fa.on(0, k(str("linear")), i, 1)
			fb.on(0, k(str("exp")), i, 1)
		}
		b.WriteString(printa(t, p, "", fa.snap()))
		b.WriteString(printa(t, p, "", fb.snap()))
		fa.agg.Clear()
		fb.agg.Clear()
	}
	b.WriteString("\n")
	diff(t, "tst.clearlquantize", b.String(), corpus(t, "aggs/tst.clearlquantize.r"))
}

// multiaggs/tst.same.d
func TestMultiSame(t *testing.T) {
	f := newFire(&Desc{ID: 1, Func: program.AggSum})
	f.on(0, nil, 90904, 1)
	a := f.snap()
	p := &Printer{}
	got := printa(t, p, "%@d %@d %@d\n", a, a, a) + printa(t, p, "%@d %@d %@d\n", a) + "\n"
	diff(t, "multiaggs/tst.same", got, corpus(t, "multiaggs/tst.same.r"))
}

// multiaggs/tst.sort.d and tst.sortpos.d
func TestMultiSort(t *testing.T) {
	mk := func(id int, val func(i int64) int64) *Agg {
		f := newFire(&Desc{ID: id, Func: program.AggSum})
		for i := int64(1); i <= 100; i++ {
			f.on(int(i%2), k(program.I64(i)), val(i), 1)
		}
		return f.snap()
	}
	a := mk(1, func(i int64) int64 { return 100 - i/2 })
	b := mk(2, func(i int64) int64 { return 100 - i/4 })
	c := mk(3, func(i int64) int64 { return 100 - i/8 })
	d := mk(4, func(i int64) int64 { return 100 - i/16 })
	p := &Printer{}
	const fm = "%10d %@10d %@10d %@10d %@10d\n"
	got := printa(t, p, fm, a, b, c, d) + printa(t, p, fm, d, c, b, a) + "\n"
	diff(t, "multiaggs/tst.sort", got, corpus(t, "multiaggs/tst.sort.r"))

	a = mk(1, func(i int64) int64 { return i })
	b = mk(2, func(i int64) int64 { return (25 + i) % 100 })
	c = mk(3, func(i int64) int64 { return (50 + i) % 100 })
	d = mk(4, func(i int64) int64 { return (75 + i) % 100 })
	var sb strings.Builder
	for j := 0; j < 10; j++ {
		p.Sort = SortOptions{Pos: j}
		sb.WriteString(fmt.Sprintf("Sorted at position %d:\n", j))
		sb.WriteString(printa(t, p, "%9d %@9d %@9d %@9d %@9d %@9d %@9d\n", a, b, c, a, d, a))
		sb.WriteString("\n")
	}
	sb.WriteString("\n")
	diff(t, "multiaggs/tst.sortpos", sb.String(), corpus(t, "multiaggs/tst.sortpos.r"))
}

// multiaggs/tst.zero.d, tst.zero2.d, tst.zero3.d: aggregations without
// the key print zeros in their own format.
func TestMultiZero(t *testing.T) {
	for _, tt := range []struct {
		name  string
		fired bool
	}{{"multiaggs/tst.zero.r", false}, {"multiaggs/tst.zero2.r", true}} {
		foo := newFire(&Desc{ID: 1, Func: program.AggSum})
		bar := newFire(&Desc{ID: 2, Func: program.AggSum})
		bop := newFire(&Desc{ID: 3, Func: program.AggQuantize})
		baz := newFire(&Desc{ID: 4, Func: program.AggLquantize, Base: -10, Levels: 20, Step: 1})
		if tt.fired {
			bop.on(0, k(i32(345)), 0, 0)
			baz.on(0, k(i32(345)), 0, 0)
		}
		foo.on(0, k(i32(123)), 123, 1)
		bar.on(0, k(i32(456)), 456, 1)
		foo.on(0, k(i32(789)), 789, 1)
		bar.on(0, k(i32(789)), 789, 1)
		p := &Printer{}
		A, B, C, D := foo.snap(), bar.snap(), bop.snap(), baz.snap()
		got := printa(t, p, "%10d %@10d %@10d\n", A, B) +
			printa(t, p, "%10d %@10d %@10d %@10d\n", A, B, C) +
			printa(t, p, "%10d %@10d %@10d %@10d %@10d\n", A, B, C, D) + "\n" + printAll(t, p, A, B, C, D)
		diff(t, tt.name, got, corpus(t, tt.name))
	}

	bop := New(&Desc{ID: 1, Func: program.AggQuantize})
	baz := New(&Desc{ID: 2, Func: program.AggLquantize, Base: -10, Levels: 20, Step: 1})
	p := &Printer{}
	got := printa(t, p, "", bop) + printa(t, p, "", baz) + printa(t, p, "%@10d %@10d\n", bop, baz) + "\n" + printAll(t, p, bop, baz)
	diff(t, "multiaggs/tst.zero3", got, corpus(t, "multiaggs/tst.zero3.r"))
}

// multiaggs/tst.tuplecompat.d
func TestMultiTupleCompat(t *testing.T) {
	one := newFire(&Desc{ID: 1, Func: program.AggSum})
	two := newFire(&Desc{ID: 2, Func: program.AggSum})
	key := k(str("foo"), i32(789), str("bar"), program.U64(0xffff888000001000))
	one.on(0, key, 123, 1)
	two.on(1, key, 456, 1)
	p := &Printer{}
	got := printa(t, p, "%10s %10d %10s %@10d %@10d\n", one.snap(), two.snap()) + "\n"
	diff(t, "multiaggs/tst.tuplecompat", got, corpus(t, "multiaggs/tst.tuplecompat.r"))
}

// printa/tst.tuple.d, tst.manyval.d, tst.fmt.d and tst.stack.d (an empty
// kernel stack, as in BEGIN).
func TestPrintaTuples(t *testing.T) {
	f := newFire(&Desc{ID: 1, Func: program.AggCount})
	f.on(0, k(i32(1), i32(2), i32(3), i32(4), i32(5)), 0, 1)
	a := f.snap()
	p := &Printer{}
	got := "\n"
	for _, fm := range []string{"%@u: -\n", "%@u: %d\n", "%@u: %d %d\n", "%@u: %d %d %d\n", "%@u: %d %d %d %d\n", "%@u: %d %d %d %d %d\n"} {
		got += printa(t, p, fm, a)
	}
	diff(t, "printa/tst.tuple", got+"\n", corpus(t, "printa/tst.tuple.r"))

	c := newFire(&Desc{ID: 1, Func: program.AggCount})
	c.on(0, nil, 0, 1)
	diff(t, "printa/tst.manyval", printa(t, p, "%@u %@u %@u %@u %@u %@u %@u\n", c.snap())+"\n", corpus(t, "printa/tst.manyval.r"))
	diff(t, "printa/tst.fmt", printa(t, p, "%@u", c.agg)+"\n", corpus(t, "printa/tst.fmt.r"))

	s := newFire(&Desc{ID: 1, Func: program.AggCount})
	s.on(0, k(program.Stack{}), 0, 1)
	sa := s.snap()
	got = printa(t, p, "%k\n", sa) + printa(t, p, "%-20k\n", sa) + printa(t, p, "%60k\n", sa) + "\n"
	diff(t, "printa/tst.stack", got, corpus(t, "printa/tst.stack.r"))
}
