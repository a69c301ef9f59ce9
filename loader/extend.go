package loader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/provider"
)

// Extend adds probes made while tracing runs (the pid and USDT probes of
// a library a process dlopen()s): perClause[i] lists the new probes clause
// i is enabled on (a probe listed twice runs the clause twice, as in
// NewPlan). Each (probe, clause) pair gets a new EPID above every EPID
// the plan has handed out, so records of earlier probes keep their
// meaning. It returns the new probes' plans, in probe id order, for
// Objects.Add. Probe ids must be new to the plan.
func (p *Plan) Extend(spec *program.Spec, perClause [][]*provider.Probe) []*ProbePlan {
	p.mu.Lock()
	defer p.mu.Unlock()
	next := uint32(1)
	for _, c := range spec.Clauses {
		next = max(next, c.EPID+1)
	}
	if n := len(p.EPIDs); n > 0 {
		next = max(next, p.EPIDs[n-1].EPID+1)
	}
	byProbe := map[uint32]*ProbePlan{}
	var out []*ProbePlan
	for ci, probes := range perClause {
		probes = append([]*provider.Probe(nil), probes...)
		sort.SliceStable(probes, func(i, j int) bool { return probes[i].ID < probes[j].ID })
		for _, pr := range probes {
			pp := byProbe[pr.ID]
			if pp == nil {
				pp = &ProbePlan{Probe: pr}
				byProbe[pr.ID] = pp
				out = append(out, pp)
			}
			pp.Clauses = append(pp.Clauses, ci)
			pp.EPIDs = append(pp.EPIDs, next)
			p.EPIDs = append(p.EPIDs, EPID{EPID: next, ProbeID: pr.ID, Clause: ci})
			next++
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Probe.ID < out[j].Probe.ID })
	p.Probes = append(p.Probes, out...)
	sort.Slice(p.Probes, func(i, j int) bool { return p.Probes[i].Probe.ID < p.Probes[j].Probe.ID })
	return out
}

// Extension is a set of probes added while tracing runs (Objects.Add):
// their programs, shared maps and attachments, removed together.
type Extension struct {
	o      *Objects
	ids    []uint32
	progs  []*loadedProg
	maps   []string
	attach []io.Closer
}

// Add loads and attaches the programs of probes a plan's Extend returned,
// into the running objects (their maps are the program's own). On error
// nothing of it stays. Close the Extension to detach them again (Close
// of the Objects does too).
func (o *Objects) Add(pps []*ProbePlan, opts Options) (_ *Extension, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil, errors.New("loader: objects closed")
	}
	e := &Extension{o: o}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.release())
		}
	}()
	for _, pp := range pps {
		if o.progs[pp.Probe.ID] != nil {
			return nil, fmt.Errorf("probe %s is enabled already", pp.Probe)
		}
		e.ids = append(e.ids, pp.Probe.ID)
	}
	if err := o.providerMaps(pps); err != nil {
		return nil, err
	}
	groups := shareGroups(&Plan{Probes: pps})
	for _, pp := range pps {
		var err error
		if g := groups[pp]; g != nil {
			if g[0] != pp {
				continue
			}
			err = o.loadShared(g, opts)
			e.maps = append(e.maps, shareMapName(pp))
		} else {
			err = o.loadProbe(pp, opts)
		}
		if lp := o.progs[pp.Probe.ID]; lp != nil {
			e.progs = append(e.progs, lp)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := o.attachProbes(context.Background(), pps, &e.attach); err != nil {
		return nil, err
	}
	if o.exts == nil {
		o.exts = map[*Extension]bool{}
	}
	o.exts[e] = true
	return e, nil
}

// Probes returns the ids of the extension's probes.
func (e *Extension) Probes() []uint32 { return e.ids }

// Close detaches the extension's probes and frees their programs.
func (e *Extension) Close() error {
	e.o.mu.Lock()
	defer e.o.mu.Unlock()
	if e.o.closed || !e.o.exts[e] {
		return nil
	}
	delete(e.o.exts, e)
	return e.release()
}

// release detaches and frees what e holds; the caller holds o.mu.
func (e *Extension) release() error {
	o := e.o
	err := detachAll(e.attach)
	e.attach = nil
	for _, lp := range e.progs {
		err = errors.Join(err, lp.prog.Close())
	}
	for _, id := range e.ids {
		delete(o.progs, id)
	}
	for _, name := range e.maps {
		if m := o.maps[name]; m != nil {
			err = errors.Join(err, m.Close())
			delete(o.maps, name)
		}
	}
	return err
}
