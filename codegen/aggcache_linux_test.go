//go:build linux

package codegen

import (
	"encoding/binary"
	"testing"
)

// TestAggCache fires an aggregation with more keys than its front cache
// has slots and checks that every firing is counted once, in the cache
// or in the map, and that colliding keys fall back to the map.
func TestAggCache(t *testing.T) {
	spec := compileD(t, `BEGIN { @c[arg0] = count(); @s[arg0, arg1] = sum(arg1); @[execname, arg0] = max(arg1); }`, Options{})
	for _, a := range spec.Aggs {
		if a.Cache == "" {
			t.Fatalf("@%s (key %d bytes, value %d) has no cache", a.Name, a.KeySize, a.ValueSize)
		}
	}
	r := loadSpec(t, spec)
	const keys, rounds = 300, 3
	for round := 0; round < rounds; round++ {
		for k := uint64(0); k < keys; k++ {
			r.fire(t, k, k*10)
		}
	}
	c := spec.Aggs[0]
	counts := map[uint64]uint64{}
	inCache, inMap := 0, 0
	var key []byte
	var vals [][]byte
	// The cache is per CPU: a test that migrates between CPUs while it
	// fires (a loaded machine) fills the slots of each.
	cpus := 1
	for idx := uint32(0); idx < c.CacheSlots; idx++ {
		if err := r.maps[c.Cache].Lookup(idx, &vals); err != nil {
			t.Fatal(err)
		}
		cpus = max(cpus, len(vals))
		for _, v := range vals {
			if binary.LittleEndian.Uint64(v) != 0 {
				inCache++
			}
		}
	}
	it := r.maps[c.Map].Iterate()
	for it.Next(&key, &vals) {
		inMap++
	}
	for _, e := range aggEntries(t, r, c) {
		counts[binary.LittleEndian.Uint64(e.key)] += binary.LittleEndian.Uint64(e.value)
	}
	if inCache == 0 || inCache > int(c.CacheSlots)*cpus || inMap == 0 {
		t.Errorf("%d keys cached, %d in the map; want 1..%d (%d slots on each of %d CPUs) and some",
			inCache, inMap, int(c.CacheSlots)*cpus, c.CacheSlots, cpus)
	}
	if len(counts) != keys {
		t.Errorf("%d keys counted, want %d", len(counts), keys)
	}
	for k, n := range counts {
		if n != rounds {
			t.Errorf("key %d counted %d times, want %d", k, n, rounds)
		}
	}
}
