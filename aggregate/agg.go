package aggregate

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/dtrace-go/dtrace/program"
)

// Entry is one tuple of an aggregation: its key values and its value
// merged over all CPUs, in the function's slot layout.
type Entry struct {
	Key  []program.Value
	Data []int64
	// CPUData holds each CPU's value when the aggregation keeps them
	// (Agg.PerCPU, the aggpercpu option).
	CPUData map[int][]int64
	// filler marks the zero entry a multi-aggregation printa() uses for
	// an aggregation without this key; dtrace prints it as zero.
	filler bool
}

// Agg is the consumer's copy of one aggregation: the merged entries,
// the normalization factor and whether printa() printed it (such
// aggregations are not printed again at exit).
type Agg struct {
	Desc *Desc
	// Normal is the normalize() factor; 0 or 1 means none.
	Normal  uint64
	Printed bool
	// PerCPU keeps every CPU's value besides the merged one (aggpercpu);
	// fill it with AddCPU.
	PerCPU  bool
	entries []*Entry
	index   map[string]*Entry
}

// New returns an empty aggregation.
func New(d *Desc) *Agg {
	return &Agg{Desc: d, Normal: 1, index: map[string]*Entry{}}
}

// Entries returns the entries in insertion order (not sorted).
func (a *Agg) Entries() []*Entry { return a.entries }

// Len returns the number of entries.
func (a *Agg) Len() int { return len(a.entries) }

func (a *Agg) normal() uint64 {
	if a.Normal == 0 {
		return 1
	}
	return a.Normal
}

// Lookup returns the entry for key, or nil.
func (a *Agg) Lookup(key []program.Value) *Entry { return a.index[keyString(key)] }

// Add merges one CPU's value for key into the aggregation, creating the
// entry if needed. A key present in the map always yields an entry, even
// when every CPU's value is still zero (as after clear()).
func (a *Agg) Add(key []program.Value, cpu []int64) *Entry {
	k := keyString(key)
	e := a.index[k]
	if e == nil {
		e = &Entry{Key: key, Data: make([]int64, a.Desc.NSlots())}
		a.index[k] = e
		a.entries = append(a.entries, e)
	}
	a.Desc.Merge(e.Data, cpu)
	return e
}

// Merge folds the per-CPU value src into dst: min and max keep the
// extreme of the CPUs that saw the function fire, stddev adds its 128-bit
// sum of squares with carry, everything else adds slot by slot.
func (d *Desc) Merge(dst, src []int64) {
	if len(src) < len(dst) {
		return
	}
	switch d.Func {
	case program.AggMin, program.AggMax:
		if src[1] == 0 {
			return
		}
		if dst[1] == 0 || (d.Func == program.AggMin && src[0] < dst[0]) || (d.Func == program.AggMax && src[0] > dst[0]) {
			dst[0] = src[0]
		}
		dst[1] += src[1]
	case program.AggStddev:
		dst[0] += src[0]
		dst[1] += src[1]
		addTo128(dst[2:4], uint64(src[2]), uint64(src[3]))
	default:
		for i := range dst {
			dst[i] += src[i]
		}
	}
}

// AddCPU is Add for the value of CPU cpu; with PerCPU set the entry
// also keeps that CPU's value for printing.
func (a *Agg) AddCPU(key []program.Value, cpu int, slots []int64) *Entry {
	e := a.Add(key, slots)
	if a.PerCPU {
		if e.CPUData == nil {
			e.CPUData = map[int][]int64{}
		}
		d := e.CPUData[cpu]
		if d == nil {
			d = make([]int64, a.Desc.NSlots())
			e.CPUData[cpu] = d
		}
		a.Desc.Merge(d, slots)
	}
	return e
}

// BeginSnapshot zeroes every entry's value and keeps the keys, before
// the consumer re-reads all CPUs' values from the kernel.
func (a *Agg) BeginSnapshot() {
	for _, e := range a.entries {
		clear(e.Data)
		for _, d := range e.CPUData {
			clear(d)
		}
	}
}

// Clear implements clear(): every value goes back to its initial state
// and the keys stay. The consumer clears the kernel's values the same way
// (all-zero slots).
func (a *Agg) Clear() { a.BeginSnapshot() }

// Normalize implements normalize(): values print divided by n.
func (a *Agg) Normalize(n uint64) { a.Normal = n }

// Denormalize implements denormalize().
func (a *Agg) Denormalize() { a.Normal = 1 }

// Trunc implements trunc(@, n): keep the n entries with the highest
// values (n > 0) or the -n with the lowest (n < 0); trunc(@) is n = 0
// and removes everything. It returns the removed entries so the
// consumer can delete their keys from the kernel's map.
func (a *Agg) Trunc(n int64) []*Entry {
	sorted := append([]*Entry(nil), a.entries...)
	keep := n
	if n < 0 {
		keep = -n
		sortEntries(sorted, a, SortOptions{})
	} else {
		sortEntries(sorted, a, SortOptions{Rev: true})
	}
	if keep >= int64(len(sorted)) {
		return nil
	}
	removed := sorted[keep:]
	gone := map[*Entry]bool{}
	for _, e := range removed {
		gone[e] = true
		delete(a.index, keyString(e.Key))
	}
	kept := a.entries[:0]
	for _, e := range a.entries {
		if !gone[e] {
			kept = append(kept, e)
		}
	}
	a.entries = kept
	return removed
}

// Remove deletes the entry for key.
func (a *Agg) Remove(key []program.Value) {
	k := keyString(key)
	e := a.index[k]
	if e == nil {
		return
	}
	delete(a.index, k)
	for i, x := range a.entries {
		if x == e {
			a.entries = append(a.entries[:i], a.entries[i+1:]...)
			break
		}
	}
}

// Scalar returns the value of a count, sum, min, max or avg entry before
// normalization, as dtrace reports it: min and max that never fired are
// INT64_MAX and INT64_MIN.
func (d *Desc) Scalar(data []int64) int64 {
	switch d.Func {
	case program.AggMin:
		if data[1] == 0 {
			return math.MaxInt64
		}
	case program.AggMax:
		if data[1] == 0 {
			return math.MinInt64
		}
	case program.AggAvg:
		if data[0] == 0 {
			return 0
		}
		return data[1] / data[0]
	case program.AggStddev:
		return int64(stddev(data, 1))
	}
	return data[0]
}

// keyString encodes a key tuple for the entry index.
func keyString(key []program.Value) string {
	var b strings.Builder
	var buf [8]byte
	put := func(tag byte, v uint64) {
		b.WriteByte(tag)
		binary.LittleEndian.PutUint64(buf[:], v)
		b.Write(buf[:])
	}
	for _, v := range key {
		switch x := v.(type) {
		case program.Int:
			put(byte('0'+x.Size), x.Uint64())
		case program.String:
			put('s', uint64(len(x)))
			b.WriteString(string(x))
		case program.Bytes:
			put('b', uint64(len(x.Data)))
			b.Write(x.Data)
		case program.Sym:
			put(byte('S'+x.Kind), x.Addr)
			put('p', uint64(x.PID))
		case program.Stack:
			tag := byte('k')
			if x.User {
				tag = 'u'
			}
			put(tag, uint64(len(x.PCs)))
			put('p', uint64(x.PID))
			for _, pc := range x.PCs {
				put('.', pc)
			}
		case program.Float:
			put('f', math.Float64bits(x.V))
		case program.Verbatim:
			put('v', uint64(len(x)))
			b.WriteString(string(x))
		}
	}
	return b.String()
}
