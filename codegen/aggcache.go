package codegen

import (
	"math/bits"

	"github.com/cilium/ebpf/asm"
	"github.com/dtrace-go/dtrace/program"
)

// This file compiles the per-CPU front cache of small aggregations.
//
// Finding an entry in dt_agg_N (a per-CPU hash) costs a jhash of the key,
// a bucket walk and a key compare inside the kernel: most of what an
// aggregation costs per event. DTrace keeps its aggregations in per-CPU
// buffers with a hash of its own; we do the same in front of the map for
// aggregations with a small key and value: dt_aggc_N is a PERCPU_ARRAY of
// aggCacheSlots slots, each
//
//	u64 claimed | key (KeySize rounded up to 8) | value (ValueSize)
//
// An update hashes the key words with a multiply (a few instructions),
// looks the slot up (the verifier inlines per-CPU array lookups), and
// either claims an empty slot for the key, updates the value of the slot
// holding the key, or, when the slot holds another key, falls back to the
// hash map. Each firing updates exactly one of the two; the consumer
// merges a key's values from both (dtrace/consume.go), as it merges the
// values of different CPUs. Only trunc() frees a slot.

const (
	aggCacheSlots = 128
	// aggCacheMinEntries: a smaller aggsize bound gets no cache.
	aggCacheMinEntries = 16 * aggCacheSlots
	aggCacheMaxKey     = 64                  // bytes: a probe name; execname and integers
	aggCacheMaxValue   = 32                  // bytes: count, sum, min, max, avg, stddev
	aggCacheMul        = -0x61c8864680b583eb // 0x9e3779b97f4a7c15, 2^64 / golden ratio
)

// aggCached emits the cache path of an update of aggregation a whose
// key is built at scratch offset key: it jumps to done after updating a
// cached entry and falls through to the hash map path otherwise.
func (f *fn) aggCached(a *program.AggSpec, key uint32, v, incr asm.Register, done string) {
	f.g.useMap(a.Cache)
	if len(a.Keys) == 0 {
		// No key: slot 0, always this entry's.
		f.emit(storeImm(asm.R10, stackMisc, 0, asm.DWord))
		f.call(asm.FnMapLookupElem, mapOp(a.Cache), operand{kind: opStack, imm: stackMisc})
		p := f.result()
		miss := f.label("acmiss")
		t := f.alloc()
		f.emit(asm.JEq.Imm(p, 0, miss), asm.Mov.Imm(t, 1), asm.StoreMem(p, 0, t, asm.DWord), asm.Add.Imm(p, int32(a.CacheValueOff())))
		f.free(t)
		f.aggUpdate(&a.Desc, p, v, incr)
		f.free(p)
		f.emit(asm.Ja.Label(done))
		f.mark(miss)
		return
	}
	words := int16(align8(a.KeySize) / 8)
	h, w := f.alloc(), f.alloc()
	load := func(r asm.Register, i int16) {
		if a.KeySize < 8 {
			f.emit(asm.LoadMem(r, regScratch, int16(key), asm.Word))
		} else {
			f.emit(asm.LoadMem(r, regScratch, int16(key)+8*i, asm.DWord))
		}
	}
	mul := f.alloc()
	f.movImm(mul, aggCacheMul)
	f.emit(asm.Mov.Imm(h, 0))
	for i := int16(0); i < words; i++ {
		load(w, i)
		f.emit(asm.Xor.Reg(h, w), asm.Mul.Reg(h, mul))
	}
	f.free(mul)
	f.emit(asm.RSh.Imm(h, int32(64-bits.TrailingZeros32(a.CacheSlots))))
	f.emit(asm.StoreMem(asm.R10, stackMisc, h, asm.DWord))
	f.free(h)
	f.free(w)
	f.call(asm.FnMapLookupElem, mapOp(a.Cache), operand{kind: opStack, imm: stackMisc})
	p := f.result()
	miss, update := f.label("acmiss"), f.label("acupd")
	f.emit(asm.JEq.Imm(p, 0, miss))
	t := f.alloc()
	claim := f.label("acclaim")
	f.emit(asm.LoadMem(t, p, 0, asm.DWord), asm.JEq.Imm(t, 0, claim))
	// The slot is taken: by this key?
	k := f.alloc()
	for i := int16(0); i < words; i++ {
		load(k, i)
		f.emit(asm.LoadMem(t, p, int16(a.CacheKeyOff())+8*i, asm.DWord), asm.JNE.Reg(t, k, miss))
	}
	f.emit(asm.Ja.Label(update))
	f.mark(claim)
	for i := int16(0); i < words; i++ {
		load(k, i)
		f.emit(asm.StoreMem(p, int16(a.CacheKeyOff())+8*i, k, asm.DWord))
	}
	f.emit(asm.Mov.Imm(t, 1), asm.StoreMem(p, 0, t, asm.DWord))
	f.free(k)
	f.free(t)
	f.mark(update)
	f.emit(asm.Add.Imm(p, int32(a.CacheValueOff())))
	f.aggUpdate(&a.Desc, p, v, incr)
	f.free(p)
	f.emit(asm.Ja.Label(done))
	f.mark(miss)
}
