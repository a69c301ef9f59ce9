package aggregate

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/program"
)

// corpusDir is the conformance corpus (read, never copied).
const corpusDir = "../../shared/conformance/dtrace-utils/test/unittest"

// corpus returns a test's expected stdout (the part before any stderr
// section).
func corpus(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpusDir, name))
	if err != nil {
		t.Skipf("conformance corpus not available: %v", err)
	}
	s := string(b)
	if i := strings.Index(s, "-- @@stderr --"); i >= 0 {
		s = s[:i]
	}
	return s
}

// fire simulates the BPF side: one CPU's values per key.
type fire struct {
	agg  *Agg
	cpus map[int]map[string]*cpuVal
}

type cpuVal struct {
	key   []program.Value
	slots []int64
}

func newFire(d *Desc) *fire {
	return &fire{agg: New(d), cpus: map[int]map[string]*cpuVal{}}
}

// on records one firing of the aggregating function on a CPU.
func (f *fire) on(cpu int, key []program.Value, v, incr int64) {
	m := f.cpus[cpu]
	if m == nil {
		m = map[string]*cpuVal{}
		f.cpus[cpu] = m
	}
	k := keyString(key)
	cv := m[k]
	if cv == nil {
		cv = &cpuVal{key: key, slots: make([]int64, f.agg.Desc.NSlots())}
		m[k] = cv
	}
	f.agg.Desc.Update(cv.slots, v, incr)
}

// snap merges every CPU's values into the aggregation.
func (f *fire) snap() *Agg {
	f.agg.BeginSnapshot()
	for _, m := range f.cpus {
		for _, cv := range m {
			f.agg.Add(cv.key, cv.slots)
		}
	}
	return f.agg
}

func k(vs ...program.Value) []program.Value { return vs }

func i32(v int) program.Value { return program.I32(int32(v)) }

func str(s string) program.Value { return program.String(s) }

func printAll(t *testing.T, p *Printer, aggs ...*Agg) string {
	t.Helper()
	var b strings.Builder
	if err := p.PrintAll(&b, aggs); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func printa(t *testing.T, p *Printer, f string, aggs ...*Agg) string {
	t.Helper()
	var pf *format.Format
	if f != "" {
		var err error
		if pf, err = format.Parse(f); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	if err := p.Printa(&b, pf, aggs...); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func diff(t *testing.T, name, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s: got\n%s\nwant\n%s", name, got, want)
	}
}

func formatChar(c byte) program.Value { return program.Int{Bits: uint64(c), Size: 1, Signed: true} }

// diffSorted compares as the corpus harness does for tests without
// @@nosort: line by line after sorting both sides.
func diffSorted(t *testing.T, name, got, want string) {
	t.Helper()
	sortLines := func(s string) string {
		lines := strings.Split(s, "\n")
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	}
	if sortLines(got) != sortLines(want) {
		t.Errorf("%s (sorted lines): got\n%s\nwant\n%s", name, got, want)
	}
}
