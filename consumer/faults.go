//go:build linux

package consumer

import (
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/output"
)

// fault decodes a fault record and hands it to the renderer.
func (c *Consumer) fault(cpu int, data []byte) error {
	if len(data) < abi.FaultRecPC+8 {
		return nil
	}
	f := &output.Fault{
		CPU:    cpu,
		Clause: int(le.Uint32(data[abi.FaultRecClause:])),
		Code:   u64(data, abi.FaultRecCode),
		Addr:   u64(data, abi.FaultRecIllval),
		PC:     int64(u64(data, abi.FaultRecPC)),
	}
	f.Name = abi.FaultName(f.Code)
	f.Probe.ID = le.Uint32(data[abi.FaultRecProbe:])
	if p := c.cfg.Probes.Probe(f.Probe.ID); p != nil {
		f.Probe = output.Probe{ID: p.ID, Provider: p.Provider, Module: p.Module, Function: p.Function, Name: p.Name}
		f.Known = true
	}
	return c.r.Fault(f)
}
