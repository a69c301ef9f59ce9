//go:build linux

package codegen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/program"
)

// TestAggregationsAgainstReference fires aggregations with random values
// and compares every map value (summed over CPUs) with
// aggregate.Desc.Update applied to the same values in Go.
func TestAggregationsAgainstReference(t *testing.T) {
	needBPF(t)
	src := `
BEGIN {
	@c[arg1] = count();
	@s[arg1] = sum(arg0);
	@mn[arg1] = min(arg0);
	@mx[arg1] = max(arg0);
	@a[arg1] = avg(arg0);
	@sd[arg1] = stddev(arg0);
	@q[arg1] = quantize(arg0);
	@l[arg1] = lquantize(arg0, -10, 100, 7);
	@ll[arg1] = llquantize(arg0, 10, 0, 6, 20);
	@w[arg1] = quantize(arg0, arg2);
	@k = count();
	@str["key", arg1] = sum(1);
}`
	spec := compileD(t, src, Options{})
	r := loadSpec(t, spec)
	rnd := rand.New(rand.NewSource(2))
	want := map[string]map[int64][]int64{} // agg name -> key -> slots
	for i := 0; i < 300; i++ {
		var v int64
		switch rnd.Intn(4) {
		case 0:
			v = int64(rnd.Intn(200)) - 50
		case 1:
			v = int64(rnd.Uint64()) >> uint(rnd.Intn(64))
		case 2:
			v = -int64(rnd.Uint64() >> uint(rnd.Intn(64)))
		default:
			v = int64(rnd.Intn(3_000_000))
		}
		key := int64(rnd.Intn(3))
		incr := int64(rnd.Intn(5))
		r.fire(t, uint64(v), uint64(key), uint64(incr))
		for _, a := range spec.Aggs {
			k := key
			if a.Name == "k" {
				k = 0
			}
			if want[a.Name] == nil {
				want[a.Name] = map[int64][]int64{}
			}
			slots := want[a.Name][k]
			if slots == nil {
				slots = make([]int64, a.Desc.NSlots())
				want[a.Name][k] = slots
			}
			val, inc := v, int64(1)
			switch a.Name {
			case "w":
				inc = incr
			case "str":
				val = 1
			}
			a.Desc.Update(slots, val, inc)
		}
	}
	for _, a := range spec.Aggs {
		got := map[int64][]int64{}
		sums := map[string][]int64{}
		for _, e := range aggEntries(t, r, a) {
			sum := sums[string(e.key)]
			if sum == nil {
				sum = make([]int64, a.Desc.NSlots())
				sums[string(e.key)] = sum
			}
			slots := make([]int64, len(sum))
			for i := range slots {
				slots[i] = int64(binary.LittleEndian.Uint64(e.value[8*i:]))
			}
			d := aggregate.Desc(a.Desc)
			d.Merge(sum, slots)
		}
		for ks, sum := range sums {
			key := []byte(ks)
			var k int64
			switch a.Name {
			case "k":
				if len(key) != 4 {
					t.Fatalf("@k key size %d, want 4", len(key))
				}
			case "str":
				if s := itemString(key, a.Keys[0]); s != "key" {
					t.Errorf("@str key string %q", s)
				}
				k = int64(binary.LittleEndian.Uint64(key[a.Keys[1].Offset:]))
			default:
				k = int64(binary.LittleEndian.Uint64(key))
			}
			got[k] = sum
		}
		if fmt.Sprint(got) != fmt.Sprint(want[a.Name]) {
			t.Errorf("@%s (%s):\ngot  %v\nwant %v", a.Name, a.Func, got, want[a.Name])
		}
	}
	_ = ebpf.PerCPUHash
}

// aggEntry is one CPU's value of one key of an aggregation.
type aggEntry struct{ key, value []byte }

// aggEntries reads every CPU's entries of aggregation a, from its map and
// its front cache (the consumer merges the two the same way).
func aggEntries(t testing.TB, r *runner, a *program.AggSpec) []aggEntry {
	t.Helper()
	var out []aggEntry
	key := make([]byte, a.KeySize)
	var vals [][]byte
	it := r.maps[a.Map].Iterate()
	for it.Next(&key, &vals) {
		for _, v := range vals {
			out = append(out, aggEntry{bytes.Clone(key), v})
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if a.Cache == "" {
		return out
	}
	for idx := uint32(0); idx < a.CacheSlots; idx++ {
		if err := r.maps[a.Cache].Lookup(idx, &vals); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			if binary.LittleEndian.Uint64(v) != 0 {
				out = append(out, aggEntry{v[a.CacheKeyOff():a.CacheValueOff()][:a.KeySize], v[a.CacheValueOff():]})
			}
		}
	}
	return out
}
