// Package perfetto renders the consumer's events as a timeline: the
// Chrome trace-event JSON (object form) that Perfetto (ui.perfetto.dev)
// and chrome://tracing open.
//
// Every record of a probe firing becomes an event on the track of the
// thread that fired the probe (records are stamped by the kernel with
// their time, pid and tid): an entry probe opens a slice ("B"), the
// matching return probe closes it ("E"), any other probe is an instant
// event ("i"). The output of the record's actions (printf() text, trace()
// values, stacks, ...) is in the event's args, as package output/json
// types it. A return whose entry was not seen is dropped; an entry
// without return is closed when tracing ends; both are counted in the
// file's otherData, which also holds the final aggregations and the
// drops. Timestamps are microseconds from the time the renderer was
// created, nondecreasing on every track.
//
// Events from other machines (guests, see package agent) are added with
// Add; each machine's processes form their own process group.
package perfetto

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/jsonrec"
)

// Config sets up a Renderer: the typing of records' actions as -x
// oformat=json types them (Machine names the local machine, "host" when
// empty, and prefixes process names once events of other machines are
// added), and the timeline's own.
type Config struct {
	jsonrec.Config
	// Out receives the file; Stderr what system() commands print
	// (os.Stderr when nil).
	Out, Stderr io.Writer
	// Clock reads CLOCK_MONOTONIC in nanoseconds, the clock records
	// are stamped with (the system's when nil). Its value at New is the
	// origin of the timestamps.
	Clock func() uint64
	// Names gives a thread's process and thread names (from /proc when
	// nil).
	Names func(pid, tid int) (process, thread string)
	// Text makes the renderer that words faults, errors and drops as
	// dtrace(1M) does (output/text's), its messages going to stderr.
	// Required: output/formats' user supplies it (output.Env.Text).
	Text func(stderr io.Writer) output.Printer
}

// Event is one record of a probe firing, ready to be placed on the
// timeline.
type Event struct {
	// Machine is the machine that fired it, "" for the local one.
	Machine string
	// Time is when it fired, in nanoseconds of the local machine's
	// CLOCK_MONOTONIC (a guest's time mapped onto it).
	Time uint64
	// PID and TID are the thread that fired it, CPU where.
	PID, TID, CPU int
	// Process and Thread name the process and thread; when empty, the
	// local machine's are looked up (Config.Names).
	Process, Thread string
	// Container names the cgroup of the thread (zonename), "" when
	// unknown; the process's track says it.
	Container string
	// Probe is the probe (its names empty if unknown), Clause the
	// clause's index.
	Probe  output.Probe
	Clause int
	// Actions are the outputs of the record's actions.
	Actions []jsonrec.Action
	// Global puts the event on no thread's track: faults, errors, drops.
	Global bool
	// Name names a global event.
	Name string

	seq int // order of arrival, to keep ties in order
}

// Renderer is the trace-event renderer.
type Renderer struct {
	out    io.Writer
	stderr io.Writer
	clock  func() uint64
	names  func(pid, tid int) (string, string)
	origin uint64
	local  string

	// jr types each record's actions.
	jr *jsonrec.Collector
	// containers names the cgroups records come from.
	containers *output.Containers
	// msgs words faults, errors and drops into mbuf.
	msgs output.Renderer
	mbuf bytes.Buffer
	// open holds, per nesting level (commit() nests), the event of the
	// record being rendered, nil if it is not shown.
	open []*Event

	// mu guards what Add touches: the queue, the machines, the names,
	// and the writing.
	mu      sync.Mutex
	pending []*Event // not yet written, in arrival order
	seq     int
	// mark is the clock at the previous Flush: every record written
	// before it has been read by now (the consumer drains every CPU
	// once per pass), so events older than it can be written in order.
	mark uint64

	tracks   map[trackKey]*track
	machines map[string]int // machine → index, for pid groups
	named    map[trackKey]bool
	procs    map[trackKey][2]string // local threads' names, read once
	minfo    map[string]map[string]any
	started  bool
	finished bool

	// What otherData reports.
	unmatched, unclosed, slices int
	drops                       map[string]uint64
	aggs                        []*jsonrec.Aggregation
	n                           int // events written
	batch                       []*traceEvent
	b                           bytes.Buffer
}

type trackKey struct {
	machine  string
	pid, tid int
}

// track is the state of one thread's track.
type track struct {
	stack []string // open slices, innermost last: their provider:module:function
	last  uint64   // time of the last event written
	// lastEv is the last event of this batch on the track, for the
	// records of the same firing's later clauses.
	lastEv *traceEvent
	lastID uint32
	lastCl int
}

// traceEvent is one object of traceEvents. Field order is the order
// written.
type traceEvent struct {
	Name  string         `json:"name"`
	Cat   string         `json:"cat,omitempty"`
	Ph    string         `json:"ph"`
	Ts    usec           `json:"ts"`
	PID   int            `json:"pid"`
	TID   int            `json:"tid"`
	Scope string         `json:"s,omitempty"`
	Args  map[string]any `json:"args,omitempty"`
}

// usec is a time in nanoseconds written as microseconds.
type usec uint64

// MarshalJSON writes the microseconds with three decimals.
func (u usec) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(u)/1e3, 'f', 3, 64), nil
}

// New returns a trace-event renderer.
func New(c Config) *Renderer {
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	if c.Clock == nil {
		c.Clock = output.Monotonic
	}
	if c.Names == nil {
		c.Names = output.ProcNames
	}
	if c.Machine == "" {
		c.Machine = "host"
	}
	r := &Renderer{out: c.Out, stderr: c.Stderr, clock: c.Clock, names: c.Names, local: c.Machine,
		tracks: map[trackKey]*track{}, machines: map[string]int{"": 0}, named: map[trackKey]bool{}, procs: map[trackKey][2]string{}, minfo: map[string]map[string]any{},
		drops: map[string]uint64{}}
	r.origin = c.Clock()
	r.mark = r.origin
	r.containers = output.NewContainers()
	r.jr = jsonrec.NewCollector(c.Config)
	msgs := c.Text(&r.mbuf)
	msgs.SetOutput(io.Discard)
	r.msgs = msgs
	return r
}

// Origin is the local CLOCK_MONOTONIC time, in nanoseconds, that
// timestamp 0 stands for.
func (r *Renderer) Origin() uint64 { return r.origin }

// SetOutput makes w the writer the file goes to.
func (r *Renderer) SetOutput(w io.Writer) { r.out = w }

// Output is where system() commands print: the error stream, since
// their text is not JSON.
func (r *Renderer) Output() io.Writer { return r.stderr }

// Begin starts the event of a record.
func (r *Renderer) Begin(rec *output.Record) error {
	if err := r.jr.Begin(rec); err != nil {
		return err
	}
	ev := &Event{Time: rec.Time, PID: rec.PID, TID: rec.TID, CPU: rec.CPU, Probe: rec.Probe, Clause: rec.Clause}
	if rec.Cgroup != 0 {
		ev.Container, _ = r.containers.Name(rec.Cgroup)
	}
	if !rec.Known {
		ev.Probe = output.Probe{ID: rec.Probe.ID}
	}
	r.open = append(r.open, ev)
	return nil
}

// Item has the item typed for the event's args. freopen() does not
// redirect a timeline: the file is one JSON object.
func (r *Renderer) Item(rec *output.Record, it *output.Item) error { return r.jr.Item(rec, it) }

// End queues the record's event, if the record holds data.
func (r *Renderer) End(rec *output.Record) error {
	ev, ok := output.Pop(&r.open)
	if !ok {
		return nil
	}
	acts, err := r.jr.End(rec)
	if err != nil || !rec.Data {
		return err
	}
	ev.Actions = acts
	r.Add(ev)
	return nil
}

// Add queues an event; it is written, in time order, once no earlier
// event can come (at a later Flush) or at exit. Other goroutines may
// call it (a guest's events come in on their own).
func (r *Renderer) Add(ev *Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev.seq = r.seq
	r.seq++
	if ev.Machine == r.local {
		ev.Machine = ""
	}
	if _, ok := r.machines[ev.Machine]; !ok {
		r.machines[ev.Machine] = len(r.machines)
	}
	if ev.Machine == "" && ev.Process == "" && ev.Thread == "" && !ev.Global {
		// Read now: the thread may be gone when the event is written.
		k := trackKey{pid: ev.PID, tid: ev.TID}
		n, ok := r.procs[k]
		if !ok {
			n[0], n[1] = r.names(ev.PID, ev.TID)
			r.procs[k] = n
		}
		ev.Process, ev.Thread = n[0], n[1]
	}
	r.pending = append(r.pending, ev)
}

// message has the text renderer word a fault, error or drop (into
// mbuf), copies the words to the error stream as dtrace(1M) prints them,
// and queues them as a global instant event stamped now.
func (r *Renderer) message(name string, say func(output.Renderer) error) error {
	r.mbuf.Reset()
	if err := say(r.msgs); err != nil {
		return err
	}
	if _, err := r.stderr.Write(r.mbuf.Bytes()); err != nil {
		return err
	}
	msg := strings.TrimSuffix(strings.TrimPrefix(r.mbuf.String(), "dtrace: "), "\n")
	r.Add(&Event{Time: r.clock(), Global: true, Name: name,
		Actions: []jsonrec.Action{{Action: name, Text: &msg}}})
	return nil
}

// Fault prints a fault as dtrace(1M) does and queues it as a global
// instant event.
func (r *Renderer) Fault(f *output.Fault) error {
	return r.message("fault", func(t output.Renderer) error { return t.Fault(f) })
}

// Error prints a library error as dtrace(1M) does and queues it as a
// global instant event.
func (r *Renderer) Error(e *output.Error) error {
	return r.message("error", func(t output.Renderer) error { return t.Error(e) })
}

// Drop prints a drop as dtrace(1M) does, counts it for otherData and
// queues it as a global instant event.
func (r *Renderer) Drop(d *output.Drop) error {
	r.drops[d.Kind.Tag()] += d.Count
	return r.message("drop", func(t output.Renderer) error { return t.Drop(d) })
}

// Flush writes the events older than the previous Flush.
func (r *Renderer) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock()
	err := r.write(r.mark, false)
	r.mark = now
	return err
}

// Aggregations ends the file: it writes every event left, closes the
// slices still open, and adds the aggregations printa() did not print
// to otherData.
func (r *Renderer) Aggregations(aggs []*aggregate.Agg) error {
	typed := r.jr.Aggregations(aggs)
	r.mu.Lock()
	r.aggs = append(r.aggs, typed...)
	r.mu.Unlock()
	return r.finish()
}

// AddAggregation adds an aggregation of another machine to otherData.
func (r *Renderer) AddAggregation(a *jsonrec.Aggregation) {
	r.mu.Lock()
	r.aggs = append(r.aggs, a)
	r.mu.Unlock()
}

// SetMachine declares another machine whose events will be added,
// before any are (so that every process name says its machine), and
// records what is known of it (its clock mapping) in otherData's
// "machines".
func (r *Renderer) SetMachine(name string, info map[string]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.machines[name]; !ok && name != r.local {
		r.machines[name] = len(r.machines)
	}
	if info == nil {
		info = map[string]any{}
	}
	r.minfo[name] = info
}

// Close ends the file if Aggregations did not.
func (r *Renderer) Close() error { return r.finish() }

// finish writes what is left and the end of the file.
func (r *Renderer) finish() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return nil
	}
	r.finished = true
	if err := r.write(0, true); err != nil {
		return err
	}
	// Close the slices still open, each at its track's end or now.
	end := r.clock()
	keys := make([]trackKey, 0, len(r.tracks))
	for k := range r.tracks {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return lessKey(keys[i], keys[j]) })
	r.b.Reset()
	for _, k := range keys {
		t := r.tracks[k]
		for i := len(t.stack) - 1; i >= 0; i-- {
			ts := max(end, t.last)
			pid, tid := r.ids(k)
			r.emit(&traceEvent{Name: funcName(t.stack[i]), Ph: "E", Ts: r.ts(ts), PID: pid, TID: tid,
				Args: map[string]any{"closed_at_exit": true}})
			r.unclosed++
			r.slices++
		}
		t.stack = nil
	}
	if err := r.writeBatch(); err != nil {
		return err
	}
	other := map[string]any{
		"clock":                  "CLOCK_MONOTONIC",
		"origin_ns":              r.origin,
		"slices":                 r.slices,
		"unmatched_returns":      r.unmatched,
		"entries_closed_at_exit": r.unclosed,
		"drops":                  r.drops,
	}
	if len(r.aggs) > 0 {
		other["aggregations"] = r.aggs
	}
	if len(r.minfo) > 0 {
		other["machines"] = r.minfo
	}
	od, err := json.Marshal(other)
	if err != nil {
		return err
	}
	r.b.WriteString("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":")
	r.b.Write(od)
	r.b.WriteString("}\n")
	_, err = r.out.Write(r.b.Bytes())
	return err
}

func lessKey(a, b trackKey) bool {
	if a.machine != b.machine {
		return a.machine < b.machine
	}
	if a.pid != b.pid {
		return a.pid < b.pid
	}
	return a.tid < b.tid
}

// start writes the head of the file once, into r.b.
func (r *Renderer) start() {
	if !r.started {
		r.started = true
		r.b.WriteString("{\"traceEvents\":[")
	}
}

// emit queues one event of the batch being written: the later clauses
// of a firing may still add to it.
func (r *Renderer) emit(e *traceEvent) { r.batch = append(r.batch, e) }

// writeBatch encodes the batch into r.b, after the file's head.
func (r *Renderer) writeBatch() error {
	r.start()
	for _, e := range r.batch {
		if r.n > 0 {
			r.b.WriteString(",")
		}
		r.n++
		r.b.WriteString("\n")
		data, err := json.Marshal(e)
		if err != nil {
			return err
		}
		r.b.Write(data)
	}
	r.batch = r.batch[:0]
	return nil
}

// ts converts a time to the file's.
func (r *Renderer) ts(t uint64) usec {
	if t < r.origin {
		return 0
	}
	return usec(t - r.origin)
}

// maxPID bounds Linux pids (PID_MAX_LIMIT): each machine's pids are
// moved up by a multiple of it.
const maxPID = 1 << 22

// ids are the pid and tid a track is drawn with.
func (r *Renderer) ids(k trackKey) (int, int) {
	off := r.machines[k.machine] * maxPID
	return k.pid + off, k.tid + off
}

// write writes, in time order, the queued events older than mark (all
// of them when all is set).
func (r *Renderer) write(mark uint64, all bool) error {
	var ready, rest []*Event
	for _, ev := range r.pending {
		if all || ev.Time < mark {
			ready = append(ready, ev)
		} else {
			rest = append(rest, ev)
		}
	}
	r.pending = rest
	if len(ready) == 0 {
		return nil
	}
	sort.SliceStable(ready, func(i, j int) bool { return ready[i].Time < ready[j].Time })
	r.b.Reset()
	for _, ev := range ready {
		r.place(ev)
	}
	for _, t := range r.tracks {
		t.lastEv = nil
	}
	if err := r.writeBatch(); err != nil {
		return err
	}
	_, err := r.out.Write(r.b.Bytes())
	r.b.Reset()
	return err
}
