package aggregate

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/program"
)

// The key prefixes the sort compares first must order entries exactly
// as the keys themselves do (keyCmp), whatever the key position.
func TestKeyPrefixOrder(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	words := []string{"", "a", "ab", "abc\x00junk", "abcdefg", "abcdefgh", "abcdefghi", "abcdefgh\x00", "b", "zzzzzzzzzz"}
	randKey := func() []program.Value {
		return []program.Value{
			program.String(words[r.Intn(len(words))]),
			program.I32(int32(r.Intn(5) - 2)),
			program.String(words[r.Intn(len(words))] + strings.Repeat("x", r.Intn(2))),
		}
	}
	a := New(&Desc{ID: 1, Func: program.AggCount})
	for pos := 0; pos < 4; pos++ {
		o := SortOptions{Key: true, KeyPos: pos}
		for n := 0; n < 5000; n++ {
			x, y := randKey(), randKey()
			ix, iy := newItem(a, &Entry{Key: x, Data: []int64{1}}, pos), newItem(a, &Entry{Key: y, Data: []int64{1}}, pos)
			if got, want := itemCmp(&ix, &iy, o), keyCmp(x, y, pos); got != want {
				t.Fatalf("keypos %d: %q vs %q: itemCmp %d, keyCmp %d", pos, x, y, got, want)
			}
		}
	}
}

// A printer kept from call to call (as the renderers keep theirs) prints
// the same text again, and sorted output does not depend on the order
// entries were added in.
func TestPrinterReuse(t *testing.T) {
	build := func(order []int) *Agg {
		f := newFire(&Desc{ID: 1, Func: program.AggSum})
		for _, i := range order {
			f.on(0, k(str([]string{"postgres", "kworker/0:1", "sh"}[i%3]), i32(i)), int64(i%4), 1)
		}
		return f.snap()
	}
	fwd, rev := make([]int, 50), make([]int, 50)
	for i := range fwd {
		fwd[i], rev[i] = i, 49-i
	}
	p := &Printer{}
	first := printa(t, p, "", build(fwd))
	if again := printa(t, p, "", build(rev)); again != first {
		t.Errorf("second printa differs:\n%s\nfirst:\n%s", again, first)
	}
	if all := "\n" + printAll(t, p, build(rev)); all != first {
		t.Errorf("PrintAll differs from printa:\n%s\nprinta:\n%s", all, first)
	}
}
