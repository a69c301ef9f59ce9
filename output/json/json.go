// Package json renders the consumer's events as JSON Lines: one JSON
// object per line for each record of a probe firing, each fault, library
// error and drop, and each aggregation printed at exit. Values are typed
// ({"type":"int","size":4,"signed":true,"value":-1}), stacks are arrays
// of frames, quantizations arrays of [low, high, count] buckets, so that
// nothing needs a regular expression to read. docs/oformat-json.schema.json
// is the schema.
package json

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"os"
	"path"
	"strings"
	"time"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// Config sets up a Renderer.
type Config struct {
	// Out receives the objects. Stderr receives what system() commands
	// print, which is not JSON (os.Stderr when nil).
	Out, Stderr io.Writer
	// Settings are the options in effect at the start.
	Settings output.Settings
	// Sym resolves stack frames and symbols; Target is $target's pid.
	Sym    format.Symbolizer
	Target int
	// Machine names the host in every object (os.Hostname, or "host").
	Machine string
	// Now gives the time stamped on objects whose record carries no
	// kernel time (time.Now when nil); it also places the kernel's
	// CLOCK_MONOTONIC on the epoch, once, at New.
	Now func() time.Time
}

// Renderer is the JSON Lines renderer.
type Renderer struct {
	base, out io.Writer
	reopened  *os.File
	stderr    io.Writer
	set       output.Settings
	fmt       *format.Printer
	aggp      *aggregate.Printer
	sym       format.Symbolizer
	machine   string
	now       func() time.Time
	// epoch is the Unix time of CLOCK_MONOTONIC's zero, taken at New.
	epoch int64
	// containers names the cgroups records come from.
	containers *output.Containers

	// recs holds, per nesting level (commit() nests), the object of the
	// record being rendered.
	recs []*Record
	b    bytes.Buffer
}

// New returns a JSON Lines renderer.
func New(c Config) *Renderer {
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	if c.Machine == "" {
		c.Machine = Hostname()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	r := &Renderer{base: c.Out, out: c.Out, stderr: c.Stderr, set: c.Settings, sym: c.Sym,
		machine: c.Machine, now: c.Now, epoch: c.Now().UnixNano() - int64(output.Monotonic()), containers: output.NewContainers()}
	r.fmt = &format.Printer{Target: c.Target, StrSize: c.Settings.StrSize, RawBytes: c.Settings.RawBytes, Sym: c.Sym}
	r.aggp = &aggregate.Printer{Fmt: r.fmt, Sort: c.Settings.AggSort}
	return r
}

// Hostname is the machine's name, or "host" when it has none.
func Hostname() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "host"
}

// SetOutput makes w the writer objects go to, unless freopen()
// redirected them.
func (j *Renderer) SetOutput(w io.Writer) {
	j.base = w
	if j.reopened == nil {
		j.out = w
	}
}

// Output is where system() commands print: the error stream, since
// their text is not JSON.
func (j *Renderer) Output() io.Writer { return j.stderr }

// The objects. Field order is the order written.

// Probe names a probe.
type Probe struct {
	ID       uint32 `json:"id"`
	Provider string `json:"provider"`
	Module   string `json:"module"`
	Function string `json:"function"`
	Name     string `json:"name"`
}

// Fired is what a record and a fault say first: what happened ("probe",
// "fault"), when, where, and in which probe and clause. Its fields come
// first in their objects.
type Fired struct {
	Type      string `json:"type"`
	Timestamp int64  `json:"timestamp"`
	Machine   string `json:"machine"`
	CPU       int    `json:"cpu"`
	Probe     *Probe `json:"probe"`
	Clause    int    `json:"clause"`
}

// Record is the object of one record of a probe firing (Type "probe").
type Record struct {
	Fired
	// PID and TID are the thread that fired the probe; Container
	// names its cgroup (zonename) and CgroupID is the cgroup's id;
	// ContainerID is the runtime's id of the container, where the
	// cgroup's name holds one (output.ContainerID).
	PID         int      `json:"pid,omitempty"`
	TID         int      `json:"tid,omitempty"`
	CgroupID    uint64   `json:"cgroupid,omitempty"`
	Container   string   `json:"container,omitempty"`
	ContainerID string   `json:"container_id,omitempty"`
	Spec        uint32   `json:"speculation,omitempty"`
	Actions     []Action `json:"actions"`
}

// Action is the output of one action of a record.
type Action struct {
	Action       string         `json:"action"`
	Text         *string        `json:"text,omitempty"`
	Format       *string        `json:"format,omitempty"`
	Args         []Value        `json:"args,omitempty"`
	Value        *Value         `json:"value,omitempty"`
	Aggregations []*Aggregation `json:"aggregations,omitempty"`
	Aggregation  string         `json:"aggregation,omitempty"`
	Address      *uint64        `json:"address,omitempty"`
	CType        string         `json:"ctype,omitempty"`
	Data         *string        `json:"data,omitempty"`
	N            *int64         `json:"n,omitempty"`
}

// Value is a typed value: Type is int, float, string, bytes, stack, sym
// or text.
type Value struct {
	Type   string   `json:"type"`
	Size   int      `json:"size,omitempty"`
	Signed *bool    `json:"signed,omitempty"`
	Value  any      `json:"value,omitempty"`
	CType  string   `json:"ctype,omitempty"`
	User   *bool    `json:"user,omitempty"`
	PID    int      `json:"pid,omitempty"`
	Frames *[]Frame `json:"frames,omitempty"`
	Kind   string   `json:"kind,omitempty"`
	*Frame `json:",omitempty"`
}

// Frame is one stack frame or symbol: its address and, when known, the
// module (kernel module or user object), symbol and offset into it.
type Frame struct {
	Address uint64 `json:"address"`
	Module  string `json:"module,omitempty"`
	Symbol  string `json:"symbol,omitempty"`
	Offset  uint64 `json:"offset"`
}

// Aggregation is an aggregation printed by printa() or at exit.
type Aggregation struct {
	Type      string  `json:"type,omitempty"` // "aggregation" at top level
	Timestamp int64   `json:"timestamp,omitempty"`
	Machine   string  `json:"machine,omitempty"`
	Name      string  `json:"name"`
	Function  string  `json:"function"`
	Entries   []Entry `json:"entries"`
}

// Entry is one key of an aggregation: Value for count, sum, min, max,
// avg and stddev, Buckets ([low, high, count], non-zero ones) for the
// quantizations.
type Entry struct {
	Keys    []Value    `json:"keys"`
	Value   *int64     `json:"value,omitempty"`
	Buckets [][3]int64 `json:"buckets,omitzero"`
}

// Fault is a run-time fault of a clause (Type "fault").
type Fault struct {
	Fired
	Fault   string `json:"fault"`
	Code    uint64 `json:"code"`
	Address uint64 `json:"address"`
	PC      int64  `json:"pc"`
}

// Error is a library error of a clause.
type Error struct {
	Type      string `json:"type"` // "error"
	Timestamp int64  `json:"timestamp"`
	Machine   string `json:"machine"`
	Probe     *Probe `json:"probe"`
	Clause    int    `json:"clause"`
	Message   string `json:"message"`
}

// Drop counts lost data.
type Drop struct {
	Type      string `json:"type"` // "drop"
	Timestamp int64  `json:"timestamp"`
	Machine   string `json:"machine"`
	Kind      string `json:"kind"`
	CPU       int    `json:"cpu"`
	Count     uint64 `json:"count"`
}

func probe(p output.Probe, known bool) *Probe {
	if !known {
		return &Probe{}
	}
	return &Probe{ID: p.ID, Provider: p.Provider, Module: p.Module, Function: p.Function, Name: p.Name}
}

func (j *Renderer) stamp() int64 { return j.now().UnixNano() }

// fired stamps what a record or fault of kind typ says first: with the
// kernel's time of the record (mono, CLOCK_MONOTONIC) where it has one,
// else the time now.
func (j *Renderer) fired(typ string, mono uint64, cpu int, p output.Probe, known bool, clause int) Fired {
	ts := j.stamp()
	if mono != 0 {
		ts = j.epoch + int64(mono)
	}
	return Fired{Type: typ, Timestamp: ts, Machine: j.machine, CPU: cpu, Probe: probe(p, known), Clause: clause}
}

// Begin starts the object of a record, stamped with the time the kernel
// wrote it (the consumer asks for stamped records under -x oformat=json).
func (j *Renderer) Begin(r *output.Record) error {
	rec := &Record{Fired: j.fired("probe", r.Time, r.CPU, r.Probe, r.Known, r.Clause), Spec: r.Spec,
		PID: r.PID, TID: r.TID, CgroupID: r.Cgroup, Actions: []Action{}}
	if r.Cgroup != 0 {
		rec.Container, _ = j.containers.Name(r.Cgroup)
		rec.ContainerID = output.ContainerID(rec.Container)
	}
	j.recs = append(j.recs, rec)
	return nil
}

// End writes the record's object, if the record holds data.
func (j *Renderer) End(r *output.Record) error {
	rec, ok := output.Pop(&j.recs)
	if !ok {
		return nil
	}
	if !r.Data {
		return nil
	}
	return j.write(rec)
}

func (j *Renderer) write(v any) error {
	j.b.Reset()
	enc := json.NewEncoder(&j.b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := j.out.Write(j.b.Bytes())
	return err
}

func ptr[T any](v T) *T { return &v }

// Item adds one action's output to the record's object.
func (j *Renderer) Item(r *output.Record, it *output.Item) error {
	if len(j.recs) == 0 {
		return nil
	}
	rec := j.recs[len(j.recs)-1]
	a := Action{Action: it.Kind.String()}
	switch it.Kind {
	case output.KindTrace, output.KindSym:
		a.Value = ptr(j.value(it.Value))
	case output.KindStack:
		v := j.value(it.Value)
		if st, ok := it.Value.(format.Stack); ok && st.User {
			a.Action = "ustack"
		}
		a.Value = &v
	case output.KindPrintf:
		var b bytes.Buffer
		if err := j.fmt.Printf(&b, it.Format, it.Args); err != nil {
			return err
		}
		a.Text = ptr(b.String())
		a.Format = j.formatString(it.Format)
		a.Args = j.values(it.Args)
	case output.KindSystem, output.KindFreopen:
		a.Text = ptr(it.Text)
		if it.Kind == output.KindFreopen {
			j.reopened, j.out = it.File, output.Redirect(it.File, j.base)
		}
	case output.KindPrinta:
		var b bytes.Buffer
		if err := j.aggp.Printa(&b, it.Format, it.Aggs...); err != nil {
			return err
		}
		a.Text = ptr(b.String())
		a.Format = j.formatString(it.Format)
		for _, ag := range it.Aggs {
			a.Aggregations = append(a.Aggregations, j.aggregation(ag))
		}
	case output.KindPrint:
		var b bytes.Buffer
		if it.ByValue {
			if err := j.fmt.PrintValue(&b, it.Type, it.Data); err != nil {
				return err
			}
		} else if err := j.fmt.PrintType(&b, it.Addr, it.Type, it.Data, j.set.PrintSize); err != nil {
			return err
		} else {
			a.Address = ptr(it.Addr)
		}
		a.Text = ptr(b.String())
		if it.Type != nil {
			a.CType = it.Type.Name
		}
		a.Data = ptr(hex.EncodeToString(it.Data))
	case output.KindTracemem:
		a.Data = ptr(hex.EncodeToString(it.Data))
	case output.KindSetopt:
		a.Text = ptr(it.Text)
		a.Args = j.values(it.Args)
		if it.Settings != nil {
			j.set = *it.Settings
			j.aggp.Sort = j.set.AggSort
		}
	case output.KindClear, output.KindTrunc, output.KindNormalize, output.KindDenormalize:
		if len(it.Aggs) > 0 {
			a.Aggregation = aggName(it.Aggs[0])
		}
		if it.Kind == output.KindTrunc || it.Kind == output.KindNormalize {
			a.N = ptr(it.N)
		}
	case output.KindExit, output.KindCommit, output.KindDiscard:
		a.N = ptr(it.N)
	}
	rec.Actions = append(rec.Actions, a)
	return nil
}

// formatString is the format's source text, nil without one.
func (j *Renderer) formatString(f *format.Format) *string {
	if f == nil {
		return nil
	}
	return ptr(f.Src)
}

func (j *Renderer) values(vs []format.Value) []Value {
	if len(vs) == 0 {
		return nil
	}
	out := make([]Value, len(vs))
	for i, v := range vs {
		out[i] = j.value(v)
	}
	return out
}

// symKinds names format.SymKind values as the D actions do.
var symKinds = [...]string{"sym", "mod", "usym", "umod", "uaddr"}

// value types a format.Value.
func (j *Renderer) value(v format.Value) Value {
	switch x := v.(type) {
	case format.Int:
		out := Value{Type: "int", Size: x.Size, Signed: ptr(x.Signed)}
		if x.Signed {
			out.Value = x.Int64()
		} else {
			out.Value = x.Uint64()
		}
		return out
	case format.Float:
		out := Value{Type: "float", Size: x.Size, Value: x.V}
		if math.IsNaN(x.V) || math.IsInf(x.V, 0) {
			// JSON has no NaN or infinities: their names, as strings.
			out.Value = formatFloat(x.V)
		}
		return out
	case format.String:
		return Value{Type: "string", Value: string(x)}
	case format.Bytes:
		return Value{Type: "bytes", Value: hex.EncodeToString(x.Data), CType: x.Type}
	case format.Verbatim:
		return Value{Type: "text", Value: string(x)}
	case format.Stack:
		frames := []Frame{}
		for _, pc := range x.PCs {
			if pc == 0 {
				break
			}
			frames = append(frames, j.frame(x.User, x.PID, pc))
		}
		out := Value{Type: "stack", User: ptr(x.User), Frames: &frames}
		if x.User {
			out.PID = x.PID
		}
		return out
	case format.Sym:
		user := x.Kind >= format.UserSym
		out := Value{Type: "sym", User: ptr(user)}
		if int(x.Kind) < len(symKinds) {
			out.Kind = symKinds[x.Kind]
		}
		if user {
			out.PID = x.PID
		}
		f := j.frame(user, x.PID, x.Addr)
		out.Frame = &f
		return out
	}
	return Value{Type: "unknown"}
}

func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	}
	return "-inf"
}

// frame resolves one address.
func (j *Renderer) frame(user bool, pid int, pc uint64) Frame {
	f := Frame{Address: pc}
	if j.sym == nil {
		return f
	}
	var ok bool
	if user {
		var obj string
		obj, f.Symbol, f.Offset, ok = j.sym.UserSym(pid, pc)
		f.Module = path.Base(obj)
		if obj == "" {
			f.Module = ""
		}
	} else {
		f.Module, f.Symbol, f.Offset, ok = j.sym.KernelSym(pc)
	}
	if !ok {
		return Frame{Address: pc}
	}
	if f.Symbol == "" {
		// Only the module is known: the offset is from nothing known.
		f.Offset = 0
	}
	return f
}

// aggName is an aggregation's D name without the '@' ("" for @).
func aggName(a *aggregate.Agg) string { return strings.TrimPrefix(a.Desc.Name, "@") }

// aggregation types an aggregation's entries, sorted as printed.
func (j *Renderer) aggregation(a *aggregate.Agg) *Aggregation {
	out := &Aggregation{Name: aggName(a), Function: a.Desc.Func.String(), Entries: []Entry{}}
	for _, e := range a.Sorted(j.set.AggSort) {
		en := Entry{Keys: j.values(e.Key)}
		if en.Keys == nil {
			en.Keys = []Value{}
		}
		switch a.Desc.Func {
		case program.AggQuantize, program.AggLquantize, program.AggLlquantize:
			en.Buckets = aggregate.Buckets(a, e)
			if en.Buckets == nil {
				en.Buckets = [][3]int64{}
			}
		default:
			en.Value = ptr(scalar(a.Result(e)))
		}
		out.Entries = append(out.Entries, en)
	}
	return out
}

// scalar is an aggregation result as an integer.
func scalar(v format.Value) int64 {
	if i, ok := v.(format.Int); ok {
		if i.Signed {
			return i.Int64()
		}
		return int64(i.Uint64())
	}
	return 0
}

// Fault writes a fault's object.
func (j *Renderer) Fault(f *output.Fault) error {
	return j.write(&Fault{Fired: j.fired("fault", 0, f.CPU, f.Probe, f.Known, f.Clause), Fault: f.Name, Code: f.Code, Address: f.Addr, PC: f.PC})
}

// Error writes a library error's object.
func (j *Renderer) Error(e *output.Error) error {
	return j.write(&Error{Type: "error", Timestamp: j.stamp(), Machine: j.machine,
		Probe: probe(e.Probe, e.Known), Clause: e.Clause, Message: e.Msg})
}

// Drop writes a drop's object.
func (j *Renderer) Drop(d *output.Drop) error {
	return j.write(&Drop{Type: "drop", Timestamp: j.stamp(), Machine: j.machine, Kind: d.Kind.Tag(),
		CPU: d.CPU, Count: d.Count})
}

// Aggregations writes, at exit, one object per aggregation printa() did
// not print.
func (j *Renderer) Aggregations(aggs []*aggregate.Agg) error {
	for _, a := range aggs {
		if a == nil || a.Printed {
			continue
		}
		o := j.aggregation(a)
		o.Type, o.Timestamp, o.Machine = "aggregation", j.stamp(), j.machine
		if err := j.write(o); err != nil {
			return err
		}
	}
	return nil
}

// Flush does nothing: objects are written whole.
func (j *Renderer) Flush() error { return nil }

// Close does nothing: the consumer closes freopen()'s files.
func (j *Renderer) Close() error { return nil }
