//go:build linux

package consumer

import (
	"bytes"
	"fmt"
	"time"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// epInfo is what an EPID stands for: a clause on a probe.
type epInfo struct {
	clause int
	probe  output.Probe
	known  bool
	segs   []*program.RecordSpec
	// data[i] says whether segs[i] records data (dataRecording).
	data []bool
}

// recState is a reused record event with the storage its items'
// slices are cut from.
type recState struct {
	rec  output.Record
	vals []program.Value
	aggs []*aggregate.Agg
}

// specRecord is a record held by a speculation.
type specRecord struct {
	cpu  int
	data []byte
	st   Stamp
}

// maxCachedEPID bounds the EPID cache slice; larger EPIDs are looked up
// in the plan each time.
const maxCachedEPID = 1 << 16

// epid returns what an EPID stands for.
func (c *Consumer) epid(epid uint32) (*epInfo, error) {
	if int(epid) < len(c.eps) && c.eps[epid] != nil {
		return c.eps[epid], nil
	}
	prid, clause, ok := c.cfg.EPID(epid)
	if !ok || clause < 0 || clause >= len(c.cfg.Spec.Clauses) {
		return nil, fmt.Errorf("record with unknown EPID %d", epid)
	}
	cl := c.cfg.Spec.Clauses[clause]
	info := &epInfo{clause: clause, segs: cl.Segments, probe: output.Probe{ID: prid}}
	if p := c.cfg.Probes.Probe(prid); p != nil {
		info.probe = output.Probe{ID: p.ID, Provider: p.Provider, Module: p.Module, Function: p.Function, Name: p.Name}
		info.known = true
	}
	for _, s := range cl.Segments {
		info.data = append(info.data, dataRecording(s.Records))
	}
	if epid < maxCachedEPID {
		for len(c.eps) <= int(epid) {
			c.eps = append(c.eps, nil)
		}
		c.eps[epid] = info
	}
	return info, nil
}

// record handles one record from a CPU's buffer.
func (c *Consumer) record(cpu int, data []byte) error {
	if len(data) < abi.HdrSize {
		return nil
	}
	c.records++
	if c.passPending {
		if err := c.endPass(time.Now()); err != nil {
			return err
		}
	}
	epid := le.Uint32(data[abi.HdrEPID:])
	if epid == abi.EPIDFault {
		return c.fault(cpu, data)
	}
	if spec := le.Uint32(data[abi.HdrSpecID:]); spec != 0 {
		// Held until commit() or discard(); what does not fit in
		// specsize is a speculative drop.
		n := c.recordSize(data)
		if c.specBytes[spec]+n > int(c.set.SpecSize) {
			c.specDrops++
			return nil
		}
		c.specBytes[spec] += n
		c.specs[spec] = append(c.specs[spec], specRecord{cpu, bytes.Clone(data), c.stamp()})
		return nil
	}
	return c.process(cpu, data, 0, c.stamp())
}

// recordSize is the size of a record as its clause made it, header
// included (what specsize counts, as in dtrace): the perf buffer pads
// the data it hands over.
func (c *Consumer) recordSize(data []byte) int {
	ep, err := c.epid(le.Uint32(data[abi.HdrEPID:]))
	if err != nil {
		return len(data)
	}
	seg := le.Uint32(data[abi.HdrSegment:])
	for _, s := range ep.segs {
		if s.Index == seg && int(s.Size) <= len(data) {
			return int(s.Size)
		}
	}
	return len(data)
}

// stamp is the stamp of the record being read from the buffers.
func (c *Consumer) stamp() Stamp {
	if c.cfg.Buffers == nil {
		return Stamp{}
	}
	return c.cfg.Buffers.Stamp()
}

// process decodes one (non-speculative or committed) record, running its
// actions and handing its items to the renderer.
func (c *Consumer) process(cpu int, data []byte, spec uint32, stamp Stamp) error {
	ep, err := c.epid(le.Uint32(data[abi.HdrEPID:]))
	if err != nil {
		return err
	}
	seg := le.Uint32(data[abi.HdrSegment:])
	si := -1
	for i, s := range ep.segs {
		if s.Index == seg {
			si = i
			break
		}
	}
	if si < 0 {
		return fmt.Errorf("record with unknown segment %d of clause %d", seg, ep.clause)
	}
	rs := ep.segs[si]
	// Records nest when commit() processes the ones it commits.
	for len(c.recs) <= c.depth {
		c.recs = append(c.recs, &recState{})
	}
	st := c.recs[c.depth]
	c.depth++
	rec := &st.rec
	*rec = output.Record{CPU: cpu, EPID: le.Uint32(data[abi.HdrEPID:]), Clause: ep.clause, Probe: ep.probe, Known: ep.known,
		First: rs.First, Data: ep.data[si], Spec: spec, Items: rec.Items[:0],
		Time: stamp.Time, PID: int(stamp.PID), TID: int(stamp.TID), Cgroup: stamp.Cgroup,
		Flow: uint64(le.Uint32(data[abi.HdrReserved:]))}
	st.vals, st.aggs = st.vals[:0], st.aggs[:0]
	prev := c.cur
	c.cur = rec
	defer func() { c.cur = prev; c.depth-- }()
	if err := c.r.Begin(rec); err != nil {
		return err
	}
	recs := rs.Records
	for i := 0; i < len(recs); i++ {
		r := recs[i]
		if int(r.Offset+r.Size) > len(data) {
			return fmt.Errorf("record item beyond record end")
		}
		args := recs[i+1 : min(i+1+r.NArgs, len(recs))]
		i += r.NArgs
		if err := c.action(st, cpu, data, r, args); err != nil {
			return err
		}
	}
	return c.r.End(rec)
}

// emit appends an item to the record and hands it to the renderer.
func (c *Consumer) emit(st *recState, it output.Item) error {
	st.rec.Items = append(st.rec.Items, it)
	return c.r.Item(&st.rec, &st.rec.Items[len(st.rec.Items)-1])
}

// format returns the parsed format string id.
func (c *Consumer) format(id int) (*format.Format, error) {
	if id < 0 || id >= len(c.cfg.Spec.Formats) {
		return nil, fmt.Errorf("bad format id %d", id)
	}
	if len(c.formats) == 0 {
		c.formats = make([]*format.Format, len(c.cfg.Spec.Formats))
	}
	if f := c.formats[id]; f != nil {
		return f, nil
	}
	f, err := format.Parse(c.cfg.Spec.Formats[id])
	if err != nil {
		return nil, err
	}
	c.formats[id] = f
	return f, nil
}

// args decodes the arguments of an action into the record's storage.
func (c *Consumer) args(st *recState, data []byte, args []program.Record) []program.Value {
	start := len(st.vals)
	for _, a := range args {
		st.vals = append(st.vals, c.boxes.value(data, a))
	}
	return st.vals[start:len(st.vals):len(st.vals)]
}

// liberr reports a library-level fault of the record being processed.
func (c *Consumer) liberr(msg string) error {
	e := &output.Error{Msg: msg}
	if r := c.cur; r != nil {
		e.Probe, e.Known, e.Clause = r.Probe, r.Known, c.cfg.Spec.Stmt(r.Clause)
	}
	return c.r.Error(e)
}
