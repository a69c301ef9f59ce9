//go:build linux

package consumer

import "github.com/dtrace-go/dtrace/output"

// Fault record offsets (codegen's faultTail).
const (
	faultClause = 8  // u32 clause index
	faultProbe  = 12 // u32 probe id
	faultCode   = 16 // u64 fault code
	faultAddr   = 24 // u64 illegal value
	faultPC     = 32 // u64 BPF pc, or -1
)

// Fault codes, as DTrace numbers them (DTRACEFLT_*).
var faultNames = map[uint64]string{
	1:  "invalid address",
	2:  "invalid alignment",
	3:  "illegal operation",
	4:  "divide-by-zero",
	5:  "out of scratch space",
	6:  "invalid kernel access",
	7:  "invalid user access",
	8:  "tuple stack overflow",
	9:  "bad stack",
	10: "invalid size",
	11: "index out of bounds",
	12: "library-level fault",
}

// fault decodes a fault record and hands it to the renderer.
func (c *Consumer) fault(cpu int, data []byte) error {
	if len(data) < faultPC+8 {
		return nil
	}
	f := &output.Fault{
		CPU:    cpu,
		Clause: int(le.Uint32(data[faultClause:])),
		Code:   u64(data, faultCode),
		Addr:   u64(data, faultAddr),
		PC:     int64(u64(data, faultPC)),
	}
	f.Name = faultNames[f.Code]
	f.Probe.ID = le.Uint32(data[faultProbe:])
	if p := c.cfg.Probes.Probe(f.Probe.ID); p != nil {
		f.Probe = output.Probe{ID: p.ID, Provider: p.Provider, Module: p.Module, Function: p.Function, Name: p.Name}
		f.Known = true
	}
	return c.r.Fault(f)
}
