package aggregate

import (
	"testing"

	"github.com/dtrace-go/dtrace/program"
)

// aggs/tst.valsortkeypos.d: equal values, ties broken from key position 1.
func TestValSortKeyPos(t *testing.T) {
	f := newFire(&Desc{ID: 1, Func: program.AggSum})
	for _, kv := range [][2]int{{1, 3}, {2, 2}, {3, 1}} {
		f.on(0, k(i32(kv[0]), i32(kv[1])), 0, 1)
	}
	got := "\n" + printAll(t, &Printer{Sort: SortOptions{KeyPos: 1}}, f.snap())
	diff(t, "tst.valsortkeypos", got, corpus(t, "aggs/tst.valsortkeypos.r"))
}

// aggs/tst.signedkeyspos.d: aggsortkey, aggsortkeypos=1, aggsortrev.
func TestSignedKeysPos(t *testing.T) {
	type row struct {
		animal string
		key    int64
		val    int64
	}
	mk := func(id, size int, rows []row) *Agg {
		f := newFire(&Desc{ID: id, Func: program.AggSum})
		for _, r := range rows {
			f.on(0, k(str(r.animal), program.Int{Bits: uint64(r.key), Size: size, Signed: true}), r.val, 1)
		}
		return f.snap()
	}
	grid := func(names [3]string, vals [3][5]int64) []row {
		var rows []row
		for ki, key := range []int64{-2, -1, 0, 1, 2} {
			for ni, n := range names {
				rows = append(rows, row{n, key, vals[ni][ki]})
			}
		}
		return rows
	}
	small := [3][5]int64{{-2, -1, 0, 1, 2}, {-22, -11, 10, 11, 22}, {-222, -111, 100, 111, 222}}
	aggs := []*Agg{
		mk(1, 1, grid([3]string{"cat", "dog", "mouse"}, small)),
		mk(2, 2, grid([3]string{"mouse", "dog", "cat"}, small)),
		mk(3, 4, grid([3]string{"mouse", "bear", "cat"}, small)),
		mk(4, 8, grid([3]string{"cat", "bear", "dog"}, small)),
	}
	p := &Printer{Sort: SortOptions{Key: true, KeyPos: 1, Rev: true}}
	got := "\n" + printAll(t, p, aggs...)
	diff(t, "tst.signedkeyspos", got, corpus(t, "aggs/tst.signedkeyspos.r"))
}

// aggs/tst.llquantsortkey.d, tst.llquantsortsum.d, tst.llquantsortzero.d
func TestLlquantizeSort(t *testing.T) {
	type upd struct {
		key     string
		v, incr int64
	}
	for _, tt := range []struct {
		name string
		ups  []upd
	}{
		{"aggs/tst.llquantsortkey.r", []upd{{"Spanky", 10, 20}, {"Buckwheat", 4, 50}, {"Alfalfa", 2, 100}}},
		{"aggs/tst.llquantsortsum.r", []upd{{"Larry", 1, -25}, {"Moe", 2, -50}, {"Shemp", 3, 50}, {"Curly", 4, 25}}},
		{"aggs/tst.llquantsortzero.r", []upd{{"Alfalfa", 0, 25}, {"Buckwheat", 0, -25}, {"Alfalfa", 2, 100}, {"Buckwheat", 4, 50}}},
	} {
		f := newFire(&Desc{ID: 1, Func: program.AggLlquantize, Factor: 10, Lmag: 0, Hmag: 2, Steps: 20})
		for _, u := range tt.ups {
			f.on(0, k(str(u.key)), u.v, u.incr)
		}
		p := &Printer{}
		got := printa(t, p, "", f.snap()) + "\n" + printAll(t, p, f.agg)
		diff(t, tt.name, got, corpus(t, tt.name))
	}
}

// aggs/tst.truncquant.d: trunc() of lquantize() keeps the largest sums.
func TestTruncQuant(t *testing.T) {
	f := newFire(&Desc{ID: 1, Func: program.AggLquantize, Base: 0, Levels: 150, Step: 1})
	for i := 0; i < 100; i++ {
		for j := 0; j < 4; j++ {
			f.on(i%2, k(i32(i)), int64(i+j), 1)
		}
	}
	a := f.snap()
	a.Trunc(5)
	diff(t, "tst.truncquant", "\n"+printAll(t, &Printer{}, a), corpus(t, "aggs/tst.truncquant.r"))
}
