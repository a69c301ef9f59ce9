//go:build linux

package consumer

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/dtrace-go/dtrace/program"
)

// freshFor reads aggregation id afresh for the printa() record being
// handled, unless it was read since that record came out of the kernel:
// a clause that calls printa() several times a firing, at thousands of
// firings a second, would otherwise keep the consumer iterating the
// aggregation's map (most of it in the kernel's hash table walk) far
// slower than the records arrive.
func (c *Consumer) freshFor(id int) error {
	seq, now := ^uint64(0), uint64(0)
	if b := c.cfg.Buffers; b != nil {
		seq, now = b.RecordSeq(), b.Seq()
	}
	if c.snapSeq[id] != 0 && c.snapSeq[id] >= seq {
		return nil
	}
	if err := c.snapshot(id); err != nil {
		return err
	}
	c.snapSeq[id] = now
	return nil
}

// snapshot reads aggregation id from its per-CPU map, and the entries of
// its front cache, into c.aggs[id].
func (c *Consumer) snapshot(id int) error {
	as := c.cfg.Spec.Aggs[id]
	a := c.aggs[id]
	m := c.cfg.Program.Map(as.Map)
	if m == nil {
		return fmt.Errorf("no map for aggregation %s", as.Name)
	}
	a.BeginSnapshot()
	key := make([]byte, m.KeySize())
	var vals [][]byte
	it := m.Iterate()
	for it.Next(&key, &vals) {
		kv := c.decodeKey(id, key)
		for cpu, v := range vals {
			a.AddCPU(kv, cpu, valueSlots(v))
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	// Entries in the front cache (codegen/aggcache.go) add to the map's.
	return c.eachCached(id, func(_ uint32, cpu int, slot []byte) bool {
		a.AddCPU(c.decodeKey(id, slot[as.CacheKeyOff():as.CacheValueOff()]), cpu, valueSlots(slot[as.CacheValueOff():]))
		return false
	})
}

// valueSlots decodes an aggregation value into its u64 slots.
func valueSlots(v []byte) []int64 {
	slots := make([]int64, len(v)/8)
	for i := range slots {
		slots[i] = int64(le.Uint64(v[i*8:]))
	}
	return slots
}

// eachCached calls fn for every claimed slot of aggregation id's front
// cache, per CPU; where fn returns true (it changed the slot), the slots
// of that index are written back.
func (c *Consumer) eachCached(id int, fn func(idx uint32, cpu int, slot []byte) bool) error {
	as := c.cfg.Spec.Aggs[id]
	if as.Cache == "" {
		return nil
	}
	m := c.cfg.Program.Map(as.Cache)
	if m == nil {
		return fmt.Errorf("no cache map for aggregation %s", as.Name)
	}
	var vals [][]byte
	for idx := uint32(0); idx < as.CacheSlots; idx++ {
		if err := m.Lookup(idx, &vals); err != nil {
			return fmt.Errorf("aggregation %s cache: %w", as.Name, err)
		}
		changed := false
		for cpu, v := range vals {
			if le.Uint64(v) != 0 && fn(idx, cpu, v) {
				changed = true
			}
		}
		if changed {
			if err := m.Update(idx, vals, ebpf.UpdateExist); err != nil {
				return fmt.Errorf("aggregation %s cache: %w", as.Name, err)
			}
		}
	}
	return nil
}

// decodeKey turns aggregation id's map key into the tuple of values.
func (c *Consumer) decodeKey(id int, key []byte) []program.Value {
	recs := c.cfg.Spec.Aggs[id].Keys
	var sizes []int
	if id < len(c.cfg.KeySizes) {
		sizes = c.cfg.KeySizes[id]
	}
	out := make([]program.Value, 0, len(recs))
	for i, r := range recs {
		v := value(key, r)
		if iv, ok := v.(program.Int); ok && i < len(sizes) && sizes[i] > 0 && sizes[i] < iv.Size {
			iv.Size = sizes[i]
			v = iv
		}
		out = append(out, c.fmt.ReduceKey(v))
	}
	return out
}

// clear zeroes an aggregation's values in the kernel.
func (c *Consumer) clear(id int) error {
	if id < 0 || id >= len(c.aggs) {
		return nil
	}
	m := c.cfg.Program.Map(c.cfg.Spec.Aggs[id].Map)
	key := make([]byte, m.KeySize())
	var keys [][]byte
	var vals [][]byte
	it := m.Iterate()
	for it.Next(&key, &vals) {
		keys = append(keys, bytes.Clone(key))
	}
	for _, k := range keys {
		var cur [][]byte
		if err := m.Lookup(k, &cur); err != nil {
			continue
		}
		for i := range cur {
			clear(cur[i])
		}
		_ = m.Update(k, cur, 0)
	}
	// Cached entries keep their keys and lose their values, as the
	// map's do.
	as := c.cfg.Spec.Aggs[id]
	_ = c.eachCached(id, func(_ uint32, _ int, slot []byte) bool {
		clear(slot[as.CacheValueOff():])
		return true
	})
	c.aggs[id].Clear()
	c.snapSeq[id] = 0
	return nil
}

// trunc keeps the top n entries (bottom -n; none for 0).
func (c *Consumer) trunc(id int, n int64) error {
	if id < 0 || id >= len(c.aggs) {
		return nil
	}
	if err := c.snapshot(id); err != nil {
		return err
	}
	c.snapSeq[id] = 0
	as := c.cfg.Spec.Aggs[id]
	m := c.cfg.Program.Map(as.Map)
	gone := c.aggs[id].Trunc(n)
	if len(gone) == 0 {
		return nil
	}
	want := map[string]bool{}
	for _, e := range gone {
		want[keyText(e.Key)] = true
	}
	key := make([]byte, m.KeySize())
	var vals [][]byte
	var del [][]byte
	it := m.Iterate()
	for it.Next(&key, &vals) {
		if want[keyText(c.decodeKey(id, key))] {
			del = append(del, bytes.Clone(key))
		}
	}
	for _, k := range del {
		_ = m.Delete(k)
	}
	// A truncated entry's cache slot is freed for any key.
	return c.eachCached(id, func(_ uint32, _ int, slot []byte) bool {
		if !want[keyText(c.decodeKey(id, slot[as.CacheKeyOff():as.CacheValueOff()]))] {
			return false
		}
		clear(slot)
		return true
	})
}

func keyText(k []program.Value) string {
	var b strings.Builder
	for _, v := range k {
		fmt.Fprintf(&b, "%#v|", v)
	}
	return b.String()
}
