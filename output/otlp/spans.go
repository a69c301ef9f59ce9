package otlp

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// span is an entry/return pair on a thread (or a lone firing) on its way
// to becoming an OTLP span.
type span struct {
	id        [8]byte
	name      string
	fn        string // provider:module:function, to pair the return
	probeID   uint32
	pid, tid  int
	cgroup    uint64
	start     uint64 // CLOCK_MONOTONIC ns
	end       uint64
	entryFlow uint64
	flow      uint64 // the flow that decides its trace
	returned  bool
	outer     *span // the span open on the thread at its entry
	attrs     []keyValue
	events    []event
	trace     [16]byte
	parent    *span
	resolved  bool
}

// join is when the span joined its flow: its entry, unless the flow
// came to the thread during it (a read that takes another process's
// flow at its return), then its return.
func (s *span) join() uint64 {
	if s.returned && s.entryFlow != s.flow {
		return s.end
	}
	return s.start
}

// inFlow reports whether s belongs to flow f as far as is known now.
func (s *span) inFlow(f uint64) bool {
	if s.returned {
		return s.flow == f
	}
	return s.entryFlow == f
}

// event is a span's event: a firing within it.
type event struct {
	time  uint64 // Unix ns
	name  string
	attrs []keyValue
}

// thread is the spans open on one thread, innermost last.
type thread struct {
	open []*span
	last *span // the span the thread's latest return ended
}

// spanRenderer turns the records of the probes Config.Spans names into
// spans.
type spanRenderer struct {
	e       *Exporter
	threads map[[2]int]*thread
	// flows holds, per flow, its spans that may still be the parent
	// of a span of another process (the newest maxCandidates).
	flows   map[uint64][]*span
	pending []*span // returned (or lone), waiting to be exported
	// rec is the span the record being rendered goes to (nil: none),
	// with what its items say.
	rec     *output.Record
	attrs   []keyValue
	printf  bytes.Buffer
	ntrace  int
	fmt     *format.Printer
	latest  uint64 // the latest record time seen
	prefix  [8]byte
	unmatch int
}

// maxCandidates bounds the spans kept per flow for parent links.
const maxCandidates = 64

func newSpanRenderer(e *Exporter) *spanRenderer {
	r := &spanRenderer{e: e, threads: map[[2]int]*thread{}, flows: map[uint64][]*span{},
		fmt: &format.Printer{Target: e.c.Target, StrSize: e.c.Settings.StrSize, Sym: e.c.Sym}}
	binary.BigEndian.PutUint64(r.prefix[:], rand.Uint64())
	return r
}

func (r *spanRenderer) Begin(rec *output.Record) error {
	r.rec = nil
	if !rec.Known || r.e.c.Spans == nil || !r.e.c.Spans(rec.Probe) {
		return nil
	}
	r.rec, r.attrs, r.ntrace = rec, nil, 0
	r.printf.Reset()
	return nil
}

func (r *spanRenderer) Item(rec *output.Record, it *output.Item) error {
	if r.rec == nil || rec != r.rec {
		return nil
	}
	switch it.Kind {
	case program.ActPrintf:
		return r.fmt.Printf(&r.printf, it.Format, it.Args)
	case program.ActTrace, program.ActSym, program.ActStack:
		r.attrs = append(r.attrs, kv("dtrace.trace."+strconv.Itoa(r.ntrace), r.e.anyValue(it.Value)))
		r.ntrace++
	}
	return nil
}

func (r *spanRenderer) End(rec *output.Record) error {
	if r.rec == nil || rec != r.rec {
		return nil
	}
	r.rec = nil
	if r.printf.Len() > 0 {
		r.attrs = append(r.attrs, kv("dtrace.printf", strValue(r.printf.String())))
	}
	r.latest = max(r.latest, rec.Time)
	k := [2]int{rec.PID, rec.TID}
	t := r.threads[k]
	if t == nil {
		t = &thread{}
		r.threads[k] = t
	}
	p := rec.Probe
	fn := p.Provider + ":" + p.Module + ":" + p.Function
	switch p.Name {
	case "entry":
		if n := len(t.open); n > 0 && t.open[n-1].probeID == p.ID && t.open[n-1].start == rec.Time {
			// A later clause of the same firing.
			t.open[n-1].attrs = append(t.open[n-1].attrs, r.attrs...)
			return nil
		}
		s := &span{name: p.Function, fn: fn, probeID: p.ID, pid: rec.PID, tid: rec.TID, cgroup: rec.Cgroup,
			start: rec.Time, entryFlow: rec.Flow, attrs: append([]keyValue{kv("dtrace.probe", strValue(p.String()))}, r.attrs...)}
		binary.BigEndian.PutUint64(s.id[:], rand.Uint64()|1)
		if n := len(t.open); n > 0 {
			s.outer = t.open[n-1]
		}
		t.open = append(t.open, s)
		if s.entryFlow != 0 {
			r.candidate(s.entryFlow, s)
		}
	case "return":
		if t.last != nil && t.last.end == rec.Time && t.last.fn == fn {
			t.last.attrs = append(t.last.attrs, r.attrs...)
			return nil
		}
		i := len(t.open) - 1
		for i >= 0 && t.open[i].fn != fn {
			i--
		}
		if i < 0 {
			// Tracing began inside it: its entry was not seen.
			r.unmatch++
			return nil
		}
		// Spans opened inside it whose return was missed end with it.
		for j := len(t.open) - 1; j >= i; j-- {
			s := t.open[j]
			s.end, s.returned = rec.Time, true
			s.flow = s.entryFlow
			if j == i {
				s.flow = rec.Flow
				if s.flow == 0 {
					s.flow = s.entryFlow
				}
				s.attrs = append(s.attrs, r.attrs...)
			}
			if s.flow != s.entryFlow && s.flow != 0 {
				r.candidate(s.flow, s)
			}
			r.pending = append(r.pending, s)
		}
		t.last = t.open[i]
		t.open = t.open[:i]
	default:
		attrs := append([]keyValue{kv("dtrace.probe", strValue(p.String()))}, r.attrs...)
		if n := len(t.open); n > 0 {
			s := t.open[n-1]
			s.events = append(s.events, event{time: r.e.unix(rec.Time), name: p.String(), attrs: attrs})
			return nil
		}
		// A firing on a thread with no span open: a span of its own,
		// of no duration, holding it as its event.
		s := &span{name: p.Function + ":" + p.Name, fn: fn, probeID: p.ID, pid: rec.PID, tid: rec.TID, cgroup: rec.Cgroup,
			start: rec.Time, end: rec.Time, entryFlow: rec.Flow, flow: rec.Flow, returned: true,
			attrs:  []keyValue{kv("dtrace.probe", strValue(p.String()))},
			events: []event{{time: r.e.unix(rec.Time), name: p.String(), attrs: attrs}}}
		if strings.TrimSpace(s.name) == ":" {
			s.name = p.String()
		}
		binary.BigEndian.PutUint64(s.id[:], rand.Uint64()|1)
		if s.flow != 0 {
			r.candidate(s.flow, s)
		}
		r.pending = append(r.pending, s)
	}
	return nil
}

// candidate files s as a possible parent in flow f.
func (r *spanRenderer) candidate(f uint64, s *span) {
	c := append(r.flows[f], s)
	if len(c) > maxCandidates {
		c = c[len(c)-maxCandidates:]
	}
	r.flows[f] = c
}

// resolve gives s its trace and parent. Within a thread, the span open
// at its entry is its parent when both are of one flow (or neither has
// one). Across processes, a flow is one trace, and a span that joined
// it with no parent on its thread descends from the span of another
// process that joined the flow last before it: the span that handed
// the work over (the write whose bytes a read took).
func (r *spanRenderer) resolve(s *span) {
	if s.resolved {
		return
	}
	s.resolved = true
	if o := s.outer; o != nil && (o.inFlow(s.flow) || s.flow == 0) {
		r.resolve(o)
		s.trace, s.parent = o.trace, o
		if s.flow != 0 {
			s.trace = r.traceID(s.flow)
		}
		return
	}
	if s.flow == 0 {
		binary.BigEndian.PutUint64(s.trace[:8], rand.Uint64())
		binary.BigEndian.PutUint64(s.trace[8:], rand.Uint64()|1)
		return
	}
	s.trace = r.traceID(s.flow)
	// A thread that holds the flow already: the span that brought the
	// flow to the thread (its first in the flow) is the parent when it
	// began the flow there, else its parent is (they are siblings: the
	// reads and the write of a filter's one request, each a child of
	// the write that handed the request over, rather than a chain of
	// reads each under the one before).
	var first *span
	for _, c := range r.flows[s.flow] {
		if c != s && c.tid == s.tid && c.pid == s.pid && c.inFlow(s.flow) && c.join() < s.join() &&
			(first == nil || c.join() < first.join()) {
			first = c
		}
	}
	if first != nil {
		r.resolve(first)
		if s.parent = first.parent; s.parent == nil {
			s.parent = first
		}
		return
	}
	// Else the span of another process that joined the flow last
	// before s did. Only times are known here, not which write s's
	// bytes came from: a span that process began in the flow after
	// its write (a filter's end-of-file read) wins when it began before
	// s joined (README: newflow() where a stage's part ends).
	var best *span
	for _, c := range r.flows[s.flow] {
		if c.pid == s.pid || !c.inFlow(s.flow) || c.join() >= s.join() {
			continue
		}
		if best == nil || c.join() > best.join() {
			best = c
		}
	}
	s.parent = best
}

// traceID is a flow's trace: a prefix of this run, then the flowid.
func (r *spanRenderer) traceID(flow uint64) [16]byte {
	var id [16]byte
	copy(id[:8], r.prefix[:])
	binary.BigEndian.PutUint64(id[8:], flow)
	return id
}

// grace is how long after its end a span waits to be exported: records
// of other CPUs that are older may still come, and the spans they make
// may be its parent.
const grace = 1_000_000_000

// flush exports the spans that ended more than grace before the latest
// record (all of them when all is set).
func (r *spanRenderer) flush(all bool) {
	var ready, rest []*span
	for _, s := range r.pending {
		if all || s.end+grace < r.latest {
			ready = append(ready, s)
		} else {
			rest = append(rest, s)
		}
	}
	r.pending = rest
	if all {
		// Spans still open end now.
		for _, t := range r.threads {
			for _, s := range t.open {
				s.end, s.returned, s.flow = max(r.latest, s.start), true, s.entryFlow
				s.attrs = append(s.attrs, kv("dtrace.closed_at_exit", boolValue(true)))
				ready = append(ready, s)
			}
			t.open = nil
		}
	}
	if len(ready) == 0 {
		return
	}
	sort.SliceStable(ready, func(i, j int) bool { return ready[i].join() < ready[j].join() })
	for _, s := range ready {
		r.resolve(s)
	}
	r.e.exportSpans(ready)
	// Forget flows whose newest candidate is long over.
	for f, c := range r.flows {
		if last := c[len(c)-1]; last.returned && last.end+60*grace < r.latest {
			delete(r.flows, f)
		}
	}
}

// spanKindInternal is SPAN_KIND_INTERNAL.
const spanKindInternal = 1

// appendSpan appends s as an OTLP Span in field num (ScopeSpans'
// spans).
func (e *Exporter) appendSpan(b []byte, num int, s *span) []byte {
	b, at := begin(b, num)
	b = bytesField(b, 1, s.trace[:])
	b = bytesField(b, 2, s.id[:])
	if s.parent != nil {
		b = bytesField(b, 4, s.parent.id[:])
	}
	b = stringOpt(b, 5, s.name)
	b = varintField(b, 6, spanKindInternal)
	b = fixed64Opt(b, 7, e.unix(s.start))
	b = fixed64Opt(b, 8, e.unix(s.end))
	b = appendAttrs(b, 9, s.attrs)
	b = appendAttrs(b, 9, []keyValue{kv("thread.id", intValue(int64(s.tid)))})
	if s.flow != 0 {
		b = appendAttrs(b, 9, []keyValue{kv("dtrace.flowid", intValue(int64(s.flow)))})
	}
	var ev int
	for _, x := range s.events {
		b, ev = begin(b, 11)
		b = fixed64Opt(b, 1, x.time)
		b = stringOpt(b, 2, x.name)
		b = appendAttrs(b, 3, x.attrs)
		b = end(b, ev)
	}
	return end(b, at)
}

// exportSpans sends spans.
func (e *Exporter) exportSpans(spans []*span) {
	body, n := e.spansRequest(spans)
	e.send(e.traces, body, n)
}

// spansRequest is the ExportTraceServiceRequest of spans, a
// ResourceSpans per process, and how many spans and events it holds.
func (e *Exporter) spansRequest(spans []*span) ([]byte, int) {
	byPID := map[int][]*span{}
	var order []int
	n := 0
	for _, s := range spans {
		if byPID[s.pid] == nil {
			order = append(order, s.pid)
		}
		byPID[s.pid] = append(byPID[s.pid], s)
		n += 1 + len(s.events)
	}
	var b []byte
	var at, ss int
	for _, pid := range order {
		first := byPID[pid][0]
		b, at = begin(b, 1)
		b, ss = appendResource(b, e.processResource(pid, first.tid, first.cgroup), e.c.Version)
		for _, s := range byPID[pid] {
			b = e.appendSpan(b, 2, s)
		}
		b = end(end(b, ss), at)
	}
	return b, n
}

// processResource is the resource of a traced process: the host's,
// with the process, its name as the service, and its container.
func (e *Exporter) processResource(pid, tid int, cgroup uint64) []keyValue {
	if r, ok := e.procs[pid]; ok {
		return r
	}
	proc, _ := e.c.Names(pid, tid)
	if proc == "" {
		proc = "pid " + strconv.Itoa(pid)
	}
	attrs := append([]keyValue{kv("service.name", strValue(proc)), kv("process.pid", intValue(int64(pid))),
		kv("process.executable.name", strValue(proc))}, e.hostAttrs()...)
	if cgroup != 0 {
		if name, path := e.containers.Name(cgroup); name != "" {
			attrs = append(attrs, kv("dtrace.zonename", strValue(name)), kv("dtrace.cgroup.path", strValue(path)))
			if id := output.ContainerID(name); id != "" {
				attrs = append(attrs, kv("container.id", strValue(id)))
			}
		}
		attrs = append(attrs, kv("dtrace.cgroupid", intValue(int64(cgroup))))
	}
	e.procs[pid] = attrs
	return attrs
}

func (r *spanRenderer) Fault(*output.Fault) error { return nil }
func (r *spanRenderer) Error(*output.Error) error { return nil }
func (r *spanRenderer) Drop(*output.Drop) error   { return nil }
func (r *spanRenderer) Aggregations([]*aggregate.Agg) error {
	return nil
}
func (r *spanRenderer) Flush() error { r.flush(false); return nil }
func (r *spanRenderer) Close() error { r.flush(true); return nil }
