//go:build linux

package consumer

import (
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/output"
)

// statusDrops are the counters of dt_cpustate (abi.CPU* offsets)
// summed over the CPUs, in the order dtrace reports them.
var statusDrops = []struct {
	off  int
	kind output.DropKind
}{
	{abi.CPUDynVarDrops, output.DropDynamic},
	{abi.CPUSpecDrops, output.DropSpec},
	{abi.CPUSpecBusy, output.DropSpecBusy},
	{abi.CPUSpecUnavail, output.DropSpecUnavail},
	{abi.CPUFlowDrops, output.DropFlow},
}

// reportDrops hands over the drops counted since the last report:
// principal buffer losses per CPU, aggregation drops per CPU and the
// global counters of dt_cpustate.
func (c *Consumer) reportDrops() error {
	for _, d := range c.cfg.Buffers.Drops() {
		if err := c.r.Drop(&d); err != nil {
			return err
		}
	}
	m := c.cfg.Program.Map(abi.MapCPUState)
	if m == nil {
		return nil
	}
	var key uint32
	var per [][]byte
	if err := m.Lookup(&key, &per); err != nil {
		return nil
	}
	if c.dropsSeen == nil {
		c.dropsSeen = map[int]uint64{}
	}
	for cpu, v := range per {
		n := u64(v, abi.CPUAggDrops)
		k := -1 - cpu
		if n > c.dropsSeen[k] {
			d := output.Drop{CPU: cpu, Kind: output.DropAggregation, Count: n - c.dropsSeen[k]}
			c.dropsSeen[k] = n
			if err := c.r.Drop(&d); err != nil {
				return err
			}
		}
	}
	for _, sd := range statusDrops {
		var total uint64
		for _, v := range per {
			total += u64(v, uint32(sd.off))
		}
		if sd.kind == output.DropSpec {
			total += c.specDrops
		}
		if sd.kind == output.DropFlow && c.stopping {
			total += c.countFlowEvicted(per)
		}
		old := c.dropsSeen[sd.off]
		if total <= old {
			continue
		}
		c.dropsSeen[sd.off] = total
		if err := c.r.Drop(&output.Drop{Kind: sd.kind, CPU: -1, Count: total - old}); err != nil {
			return err
		}
	}
	return nil
}
