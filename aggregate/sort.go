package aggregate

import (
	"bytes"
	"encoding/binary"
	"math/big"
	"slices"
	"sort"
	"strings"

	"github.com/dtrace-go/dtrace/program"
)

// SortOptions are dtrace's aggregation sorting options.
type SortOptions struct {
	// Key sorts by key instead of by value (aggsortkey).
	Key bool
	// Rev reverses the order (aggsortrev).
	Rev bool
	// KeyPos is the key position compared first (aggsortkeypos).
	KeyPos int
	// Pos is the aggregation whose value sorts a multi-aggregation
	// printa() (aggsortpos).
	Pos int
}

// valKey is an entry's value reduced to what dtrace compares.
type valKey struct {
	i    int64      // count, sum, min, max, avg
	u    uint64     // stddev
	f    *big.Float // quantizations: sum of bucket value times count (long double)
	zero int64      // quantizations: the count at zero breaks ties
}

func (d *Desc) valKey(e *Entry) valKey {
	data := e.Data
	switch d.Func {
	case program.AggAvg:
		if data[0] == 0 {
			return valKey{}
		}
		return valKey{i: data[1] / data[0]}
	case program.AggStddev:
		if data[0] == 0 {
			return valKey{}
		}
		return valKey{u: stddev(data, 1)}
	case program.AggQuantize:
		sum := newFloat()
		for i, c := range data {
			if c != 0 { // adding an exact zero changes nothing
				sum.Add(sum, mulFloat(float64(program.QuantizeBucketValue(i)), c))
			}
		}
		return valKey{f: sum, zero: data[program.QuantizeZero]}
	case program.AggLquantize:
		base := int64(d.Base)
		sum := mulFloat(float64(base-1), data[0])
		b := base
		for i := 0; i < int(d.Levels); i++ {
			sum.Add(sum, mulFloat(float64(b), data[i+1]))
			b += int64(d.Step)
		}
		sum.Add(sum, mulFloat(float64(b+1), data[d.Levels+1]))
		var zero int64
		b = base
		switch {
		case base-1 == 0:
			zero = data[0]
		default:
			found := false
			for i := 0; i < int(d.Levels); i++ {
				if b == 0 {
					zero, found = data[i+1], true
					break
				}
				b += int64(d.Step)
			}
			if !found && b+1 == 0 {
				zero = data[d.Levels+1]
			}
		}
		return valKey{f: sum, zero: zero}
	case program.AggLlquantize:
		if !d.llqValid() {
			return valKey{f: newFloat()}
		}
		return valKey{f: d.llqSum(data), zero: data[d.llqZero()]}
	}
	if e.filler {
		return valKey{}
	}
	return valKey{i: d.Scalar(data)}
}

// longDouble returns a zero with the 64-bit mantissa of the x87 long
// double dtrace computes sort keys and bars in; every operation on it
// rounds to nearest even as the FPU does, so ties come out as in dtrace.
func longDouble() *big.Float { return new(big.Float).SetPrec(64) }

func newFloat() *big.Float { return longDouble() }

func mulFloat(a float64, n int64) *big.Float {
	x := newFloat().SetFloat64(a)
	return x.Mul(x, newFloat().SetInt64(n))
}

// llqSum is dt_aggregate_llquantizedsum.
func (d *Desc) llqSum(data []int64) *big.Float {
	factor, lmag, hmag, steps := int(d.Factor), int(d.Lmag), int(d.Hmag), int(d.Steps)
	sf := steps / factor
	bin0 := d.llqZero()
	total := mulFloat(float64(ipow(uint64(factor), uint64(lmag))), data[bin0+1]-data[bin0-1])
	i := 1
	if lmag == 0 && steps > factor {
		for step := 2; step <= factor; step++ {
			i += sf
			total.Add(total, mulFloat(float64(step), data[bin0+i]-data[bin0-i]))
		}
		lmag = 1
	}
	scale := newFloat().SetFloat64(float64(ipow(uint64(factor), uint64(lmag+1))))
	scale.Quo(scale, newFloat().SetInt64(int64(steps)))
	for mag := lmag; mag <= hmag; mag++ {
		for step := sf + 1; step <= steps; step++ {
			i++
			t := newFloat().SetInt64(int64(step))
			t.Mul(t, scale)
			t.Mul(t, newFloat().SetInt64(data[bin0+i]-data[bin0-i]))
			total.Add(total, t)
		}
		scale.Mul(scale, newFloat().SetInt64(int64(factor)))
	}
	return total
}

func cmp3[T int64 | uint64 | int](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// valCmp is dt_aggregate_valcmp for two values of one function.
func valCmp(a, b *valKey) int {
	if a.f != nil && b.f != nil {
		if c := a.f.Cmp(b.f); c != 0 {
			return c
		}
		return cmp3(a.zero, b.zero)
	}
	if c := cmp3(a.i, b.i); c != 0 {
		return c
	}
	return cmp3(a.u, b.u)
}

// keyCmp is dt_aggregate_keycmp: keys compare position by position,
// starting at keyPos, integers as unsigned numbers of their size,
// everything else byte by byte.
func keyCmp(a, b []program.Value, keyPos int) int {
	if c := cmp3(len(a), len(b)); c != 0 {
		return c
	}
	n := len(a)
	if keyPos+1 >= n+1 {
		keyPos = 0
	}
	for i := 0; i < n; i++ {
		k := (i + keyPos) % n
		if c := valueCmp(a[k], b[k]); c != 0 {
			return c
		}
	}
	return 0
}

func valueSize(v program.Value) int {
	switch x := v.(type) {
	case program.Int:
		return x.Size
	case program.Bytes:
		return len(x.Data)
	case program.Sym:
		if x.Kind >= program.UserSym {
			return 16
		}
		return 8
	case program.Stack:
		return 8 * len(x.PCs)
	}
	return 0
}

func valueCmp(a, b program.Value) int {
	if c := cmp3(valueSize(a), valueSize(b)); c != 0 {
		return c
	}
	switch x := a.(type) {
	case program.Int:
		y, _ := b.(program.Int)
		return cmp3(x.Uint64(), y.Uint64())
	case program.String:
		y, _ := b.(program.String)
		return strings.Compare(cstr(string(x)), cstr(string(y)))
	case program.Bytes:
		y, _ := b.(program.Bytes)
		return bytes.Compare(x.Data, y.Data)
	case program.Sym:
		y, _ := b.(program.Sym)
		if x.Kind >= program.UserSym {
			if c := cmp3(x.PID, y.PID); c != 0 {
				return c
			}
		}
		return cmp3(x.Addr, y.Addr)
	case program.Stack:
		y, _ := b.(program.Stack)
		return bytes.Compare(stackBytes(x), stackBytes(y))
	case program.Verbatim:
		y, _ := b.(program.Verbatim)
		return strings.Compare(string(x), string(y))
	}
	return 0
}

func cstr(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

func stackBytes(s program.Stack) []byte {
	b := make([]byte, 8*len(s.PCs))
	for i, pc := range s.PCs {
		binary.LittleEndian.PutUint64(b[8*i:], pc)
	}
	return b
}

// item is one entry being sorted, with what the comparisons read
// computed once: its aggregation's id, its value key and the prefix of
// its first compared key.
type item struct {
	id int
	vk valKey
	// kp encodes the keys in comparison order (keyPrefix); whole says
	// it holds all of them.
	kp    [3]uint64
	whole bool
	agg   *Agg
	e     *Entry
	// off and end delimit the line made for it in Printer.text, if any.
	off, end int
}

// makeItems returns the entries of aggs to sort, their items held in one
// array rather than allocated one by one.
func makeItems(aggs []*Agg, skipPrinted bool) []*item {
	backing := fillItems(nil, aggs, skipPrinted, 0)
	ptrs := make([]*item, len(backing))
	for i := range backing {
		ptrs[i] = &backing[i]
	}
	return ptrs
}

// fillItems appends the entries of aggs to items, with their value keys
// and the prefix of the key compared first (at keyPos).
func fillItems(items []item, aggs []*Agg, skipPrinted bool, keyPos int) []item {
	n := 0
	for _, a := range aggs {
		if !skipPrinted || !a.Printed {
			n += len(a.entries)
		}
	}
	items = slices.Grow(items[:0], n)
	for _, a := range aggs {
		if skipPrinted && a.Printed {
			continue
		}
		for _, e := range a.entries {
			items = append(items, newItem(a, e, keyPos))
		}
	}
	return items
}

func newItem(a *Agg, e *Entry, keyPos int) item {
	it := item{id: a.Desc.ID, vk: a.Desc.valKey(e), agg: a, e: e}
	it.kp, it.whole = keyPrefix(e.Key, keyPos)
	return it
}

// keyPrefix encodes the keys, in the order keyCmp compares them, into
// bytes that sort as the keys do: an integer as its unsigned value
// big-endian, a string as its bytes and a NUL, padded to a multiple of
// eight (a string is never a prefix of its own encoding, so the fields
// that follow line up whenever the strings are equal). The first 24
// bytes are kept, as numbers; whole says they hold every key, so that
// equal prefixes are equal keys. A key of another type ends the
// encoding and leaves the rest to keyCmp.
func keyPrefix(key []program.Value, keyPos int) (kp [3]uint64, whole bool) {
	n := len(key)
	if keyPos >= n {
		keyPos = 0
	}
	var buf [24]byte
	at := 0
	for i := 0; i < n; i++ {
		switch x := key[(i+keyPos)%n].(type) {
		case program.Int:
			if at+8 > len(buf) {
				return words(buf), false
			}
			binary.BigEndian.PutUint64(buf[at:], x.Uint64())
			at += 8
		case program.String:
			j := 0
			for ; j < len(x) && x[j] != 0; j++ {
				if at+j >= len(buf) {
					return words(buf), false
				}
				buf[at+j] = x[j]
			}
			// The NUL is the zero already there, then padding.
			at += (j + 8) &^ 7
			if at > len(buf) {
				return words(buf), false
			}
		default:
			return words(buf), false
		}
	}
	return words(buf), true
}

func words(b [24]byte) [3]uint64 {
	return [3]uint64{binary.BigEndian.Uint64(b[0:]), binary.BigEndian.Uint64(b[8:]), binary.BigEndian.Uint64(b[16:])}
}

// itemCmp is dtrace's default ordering: aggregation id, then value and
// key (or key alone with aggsortkey), all reversed by aggsortrev.
func itemCmp(x, y *item, o SortOptions) int {
	c := cmp3(x.id, y.id)
	if c == 0 && !o.Key {
		c = valCmp(&x.vk, &y.vk)
	}
	if c == 0 {
		// The prefixes decide most ties without reading the keys.
		for i := 0; i < len(x.kp) && c == 0; i++ {
			c = cmp3(x.kp[i], y.kp[i])
		}
		if c == 0 && !(x.whole && y.whole) {
			c = keyCmp(x.e.Key, y.e.Key, o.KeyPos)
		}
	}
	if o.Rev {
		c = -c
	}
	return c
}

// sortItems sorts by a total order (keys are unique within an
// aggregation), so an unstable sort is deterministic. The items are
// sorted in place rather than through pointers: comparisons then read
// memory in order, which is most of the cost for a million entries.
func sortItems(items []item, o SortOptions) {
	sort.Sort(itemSorter{items, o})
}

// itemSorter compares items where they lie instead of copying them into
// a comparison function.
type itemSorter struct {
	items []item
	o     SortOptions
}

func (s itemSorter) Len() int           { return len(s.items) }
func (s itemSorter) Less(i, j int) bool { return itemCmp(&s.items[i], &s.items[j], s.o) < 0 }
func (s itemSorter) Swap(i, j int)      { s.items[i], s.items[j] = s.items[j], s.items[i] }

func sortEntries(es []*Entry, a *Agg, o SortOptions) {
	items := make([]item, len(es))
	for i, e := range es {
		items[i] = newItem(a, e, o.KeyPos)
	}
	sortItems(items, o)
	for i := range items {
		es[i] = items[i].e
	}
}

// Sorted returns the entries in the order printa() prints them.
func (a *Agg) Sorted(o SortOptions) []*Entry {
	es := append([]*Entry(nil), a.entries...)
	sortEntries(es, a, o)
	return es
}

// Bundle is one line of a multi-aggregation printa(): a key and the
// entry of each aggregation for it (a zero entry where an aggregation
// has none), in printa()'s argument order.
type Bundle struct {
	Key     []program.Value
	Entries []*Entry
}

// Join groups the entries of several aggregations by key and sorts the
// groups as dtrace_aggregate_walk_joined does: by the value of the
// aggregation at position aggsortpos (then the others), or by key.
func Join(aggs []*Agg, o SortOptions) []Bundle {
	n := len(aggs)
	pos := o.Pos
	if pos < 0 || pos >= n {
		pos = 0
	}
	// rot[i] is the printa() argument at bundle position i; an
	// aggregation named twice reuses its first position.
	rot := make([]int, n)
	first := map[*Agg]int{}
	for i := 0; i < n; i++ {
		rot[i] = (i + pos) % n
		if _, ok := first[aggs[rot[i]]]; !ok {
			first[aggs[rot[i]]] = i
		}
	}
	var uniq []*Agg
	for i := 0; i < n; i++ {
		if first[aggs[rot[i]]] == i {
			uniq = append(uniq, aggs[rot[i]])
		}
	}
	items := makeItems(uniq, false)
	if len(items) == 0 {
		return nil
	}
	slices.SortFunc(items, func(x, y *item) int {
		if c := keyCmp(x.e.Key, y.e.Key, o.KeyPos); c != 0 {
			return c
		}
		return cmp3(x.agg.Desc.ID, y.agg.Desc.ID)
	})
	type bundle struct {
		key   []program.Value
		slots []*item
	}
	var bundles []*bundle
	for start := 0; start < len(items); {
		end := start + 1
		for end < len(items) && keyCmp(items[end].e.Key, items[start].e.Key, o.KeyPos) == 0 {
			end++
		}
		bd := &bundle{key: items[start].e.Key, slots: make([]*item, n)}
		for k := start; k < end; k++ {
			bd.slots[first[items[k].agg]] = items[k]
		}
		for i := 0; i < n; i++ {
			if f := first[aggs[rot[i]]]; f != i {
				bd.slots[i] = bd.slots[f]
			}
		}
		for i := 0; i < n; i++ {
			if bd.slots[i] == nil {
				a := aggs[rot[i]]
				z := &Entry{Data: make([]int64, a.Desc.NSlots()), filler: true}
				zi := newItem(a, z, 0)
				bd.slots[i] = &zi
			}
		}
		for i := 0; i < n; i++ {
			if f := first[aggs[rot[i]]]; f != i {
				bd.slots[i] = bd.slots[f]
			}
		}
		bundles = append(bundles, bd)
		start = end
	}
	sign := 1
	if o.Rev {
		sign = -1
	}
	slices.SortFunc(bundles, func(x, y *bundle) int {
		if o.Key {
			if c := keyCmp(x.key, y.key, o.KeyPos); c != 0 {
				return sign * c
			}
		}
		for k := 0; k < n; k++ {
			if c := valCmp(&x.slots[k].vk, &y.slots[k].vk); c != 0 {
				return sign * c
			}
		}
		if o.Key {
			return 0
		}
		return sign * keyCmp(x.key, y.key, o.KeyPos)
	})
	out := make([]Bundle, len(bundles))
	for i, bd := range bundles {
		es := make([]*Entry, n)
		for j := 0; j < n; j++ {
			es[j] = bd.slots[(j-pos+n)%n].e
		}
		out[i] = Bundle{Key: bd.key, Entries: es}
	}
	return out
}
