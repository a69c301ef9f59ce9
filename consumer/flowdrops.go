//go:build linux

package consumer

import (
	"github.com/cilium/ebpf"

	"github.com/dtrace-go/dtrace/internal/abi"
)

// flowTables are the flow variable tables (LRU hashes; docs/FLOW.md).
var flowTables = []string{abi.MapFlow, abi.MapFlowData, abi.MapFlowPos, abi.MapFlowTag, abi.MapFlowBio}

// countFlowEvicted returns the flow table entries the kernel evicted to
// make room for new ones: those the programs made (summed over the CPUs'
// counters per), less those they deleted and those still there. Once
// tracing has stopped no clause changes the tables, so it is exact; it
// is counted once.
func (c *Consumer) countFlowEvicted(per [][]byte) uint64 {
	if c.flowCounted {
		return c.flowEvicted
	}
	c.flowCounted = true
	var made, gone, present uint64
	for _, v := range per {
		made += u64(v, abi.CPUFlowMade)
		gone += u64(v, abi.CPUFlowGone)
	}
	for _, name := range flowTables {
		if m := c.cfg.Program.Map(name); m != nil {
			present += countEntries(m)
		}
	}
	if made > gone+present {
		c.flowEvicted = made - gone - present
	}
	return c.flowEvicted
}

// countEntries counts the keys of a hash map (no more than it holds:
// a key deleted under the walk would start it again).
func countEntries(m *ebpf.Map) uint64 {
	var n uint64
	var prev any // nil: the first key
	next := make([]byte, m.KeySize())
	for n < uint64(m.MaxEntries()) && m.NextKey(prev, &next) == nil {
		n++
		prev = append([]byte(nil), next...)
	}
	return n
}
