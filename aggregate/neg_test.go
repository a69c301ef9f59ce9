package aggregate

import (
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/program"
)

// aggs/tst.negquant.d and tst.neglquant.d: negative increments, huge
// counts and sorting by long double sums.
func TestNegativeQuantizations(t *testing.T) {
	for _, tt := range []struct {
		name string
		d    *Desc
	}{
		{"aggs/tst.negquant.r", &Desc{ID: 1, Func: program.AggQuantize}},
		{"aggs/tst.neglquant.r", &Desc{ID: 1, Func: program.AggLquantize, Base: 0, Levels: 10, Step: 1}},
	} {
		f := newFire(tt.d)
		on := func(key string, v, incr int64) { f.on(0, k(str(key)), v, incr) }
		val := int64(123)
		on("j-church", 1, 100)
		on("j-church", 1, -99)
		on("j-church", 1, -1)
		on("k-ingleside", 1, -val)
		on("l-taraval", 0, -val)
		on("l-taraval", -1, -val)
		on("l-taraval", 1, val)
		on("l-taraval", 1, val)
		on("m-oceanview", 1, 1<<63-1)
		on("m-oceanview", 1, 1)
		on("m-oceanview", 2, 1<<63-1)
		on("m-oceanview", 8, 400000)
		on("n-judah", 1, val)
		on("n-judah", 2, val)
		on("n-judah", 2, val)
		on("n-judah", 2, 1)
		if tt.d.Func == program.AggQuantize {
			for _, start := range []int64{1<<63 - 1, 1<<63 - 4} {
				key := "f-market"
				if start != 1<<63-1 {
					key = "s-castro"
				}
				i, v := int64(1), start
				for n := 0; n < 4; n++ {
					on(key, i, v)
					i <<= 1
					v >>= 1
				}
			}
		} else {
			i := int64(1)
			v := int64(1<<63 - 1)
			for n := 0; n < 7; n++ {
				on("f-market", i, v)
				i++
				v = (1<<63 - 1) / i
			}
			i = 1
			v = 1<<63 - 7
			for n := 0; n < 7; n++ {
				on("s-castro", i, v)
				i++
				v = (1<<63 - 1) / i
			}
		}
		got := "\n" + printAll(t, &Printer{}, f.snap())
		diff(t, tt.name, got, corpus(t, tt.name))
	}
}

// aggs/tst.negorder.d
func TestNegOrder(t *testing.T) {
	ds := []*Desc{
		{ID: 1, Func: program.AggQuantize}, {ID: 2, Func: program.AggLquantize, Base: -10, Levels: 20, Step: 1},
		{ID: 3, Func: program.AggSum}, {ID: 4, Func: program.AggMax}, {ID: 5, Func: program.AggMin},
	}
	var fs []*fire
	for _, d := range ds {
		fs = append(fs, newFire(d))
	}
	for i, incr := range negWeights() {
		key := k(program.I64(int64(i + 1))) // an undeclared D global is int64_t
		fs[0].on(0, key, 1, incr)
		fs[1].on(0, key, 1, incr)
		fs[2].on(0, key, incr, 1)
		fs[3].on(0, key, incr, 1)
		fs[4].on(0, key, incr, 1)
	}
	var got strings.Builder
	p := &Printer{}
	for j, name := range []string{"quantize()", "lquantize()", "sum()", "max()", "min()"} {
		got.WriteString("Ordering of " + name + " with some negative weights:\n")
		got.WriteString(printa(t, p, "", fs[j].snap()))
		got.WriteString("\n")
	}
	got.WriteString("\n")
	diff(t, "tst.negorder", got.String(), corpus(t, "aggs/tst.negorder.r"))
}

// aggs/tst.order.d: keys sort by their bytes.
func TestKeyOrder(t *testing.T) {
	p := &Printer{}
	var got strings.Builder
	ints := newFire(&Desc{ID: 1, Func: program.AggSum})
	for _, v := range []int{8, 6, 7, 5, 3, 0, 9} {
		ints.on(0, k(i32(v)), 1, 1)
	}
	tour := newFire(&Desc{ID: 2, Func: program.AggSum})
	for _, c := range []string{"Ghent", "Berlin", "London", "Dublin", "Shanghai", "Zurich", "Regina", "Winnipeg", "Edmonton", "Calgary"} {
		tour.on(0, k(str(c)), 1, 1)
	}
	ate := newFire(&Desc{ID: 3, Func: program.AggSum})
	for _, c := range []string{"Rice", "Oatmeal", "Barley", "Carrots", "Sweet potato", "Asparagus", "Squash"} {
		ate.on(0, k(i32(8), str(c)), 1, 1)
	}
	chars := newFire(&Desc{ID: 4, Func: program.AggSum})
	for _, c := range "asdf" {
		chars.on(0, k(formatChar(byte(c))), 1, 1)
	}
	got.WriteString(printa(t, p, "%d\n", ints.snap()) + "\n")
	got.WriteString(printa(t, p, "%s\n", tour.snap()) + "\n")
	got.WriteString(printa(t, p, "%d %s\n", ate.snap()) + "\n")
	got.WriteString(printa(t, p, "%c\n", chars.snap()) + "\n\n")
	diff(t, "tst.order", got.String(), corpus(t, "aggs/tst.order.r"))
}
