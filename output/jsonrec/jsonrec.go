// Package jsonrec is the JSON record model: the typed objects that -x
// oformat=json writes one per line (docs/oformat-json.schema.json), that
// the timeline (output/perfetto) carries as its events' arguments and
// that the guest agent sends its host, and the Typer that makes them from
// the consumer's events. The renderers share it from here, below them,
// rather than import each other.
package jsonrec

import (
	"bytes"
	"encoding/hex"
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

// Config sets up a Typer.
type Config struct {
	// Settings are the options in effect at the start.
	Settings output.Settings
	// Sym resolves stack frames and symbols; Target is $target's pid.
	Sym    format.Symbolizer
	Target int
	// Machine names the host in every object (os.Hostname, or "host").
	Machine string
	// Now gives the time stamped on objects whose record carries no
	// kernel time (time.Now when nil); it also places the kernel's
	// CLOCK_MONOTONIC on the epoch, once, at NewTyper.
	Now func() time.Time
}

// Typer makes the objects from the consumer's events. It follows
// setopt(): the settings an Action applies hold for what it types next.
type Typer struct {
	set     output.Settings
	fmt     *format.Printer
	aggp    *aggregate.Printer
	sym     format.Symbolizer
	machine string
	now     func() time.Time
	// epoch is the Unix time of CLOCK_MONOTONIC's zero, taken at
	// NewTyper.
	epoch int64
	// containers names the cgroups records come from.
	containers *output.Containers
}

// NewTyper returns a Typer.
func NewTyper(c Config) *Typer {
	if c.Machine == "" {
		c.Machine = Hostname()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	t := &Typer{set: c.Settings, sym: c.Sym, machine: c.Machine, now: c.Now,
		epoch: c.Now().UnixNano() - int64(output.Monotonic()), containers: output.NewContainers()}
	t.fmt = &format.Printer{Target: c.Target, StrSize: c.Settings.StrSize, RawBytes: c.Settings.RawBytes, Sym: c.Sym}
	t.aggp = &aggregate.Printer{Fmt: t.fmt, Sort: c.Settings.AggSort}
	return t
}

// Hostname is the machine's name, or "host" when it has none.
func Hostname() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "host"
}

// ProbeOf names a probe; an unknown one has no names.
func ProbeOf(p output.Probe, known bool) *Probe {
	if !known {
		return &Probe{}
	}
	return &Probe{ID: p.ID, Provider: p.Provider, Module: p.Module, Function: p.Function, Name: p.Name}
}

// Stamp is the time now, in nanoseconds since the epoch.
func (t *Typer) Stamp() int64 { return t.now().UnixNano() }

// fired stamps what a record or fault of kind typ says first: with the
// kernel's time of the record (mono, CLOCK_MONOTONIC) where it has one,
// else the time now.
func (t *Typer) fired(typ string, mono uint64, cpu int, p output.Probe, known bool, clause int) Fired {
	ts := t.Stamp()
	if mono != 0 {
		ts = t.epoch + int64(mono)
	}
	return Fired{Type: typ, Timestamp: ts, Machine: t.machine, CPU: cpu, Probe: ProbeOf(p, known), Clause: clause}
}

// Record starts the object of a record, stamped with the time the kernel
// wrote it (where the consumer asked for stamped records), with no
// actions yet.
func (t *Typer) Record(r *output.Record) *Record {
	rec := &Record{Fired: t.fired("probe", r.Time, r.CPU, r.Probe, r.Known, r.Clause), Spec: r.Spec,
		PID: r.PID, TID: r.TID, CgroupID: r.Cgroup, Actions: []Action{}}
	if r.Cgroup != 0 {
		rec.Container, _ = t.containers.Name(r.Cgroup)
		rec.ContainerID = output.ContainerID(rec.Container)
	}
	return rec
}

func ptr[T any](v T) *T { return &v }

// Action types one item of a record. A setopt() item's settings hold
// from here on; freopen()'s file is the caller's to follow.
func (t *Typer) Action(it *output.Item) (Action, error) {
	a := Action{Action: it.Kind.String()}
	switch it.Kind {
	case program.ActTrace, program.ActSym:
		a.Value = ptr(t.Value(it.Value))
	case program.ActStack:
		v := t.Value(it.Value)
		if st, ok := it.Value.(program.Stack); ok && st.User {
			a.Action = "ustack"
		}
		a.Value = &v
	case program.ActPrintf:
		var b bytes.Buffer
		if err := t.fmt.Printf(&b, it.Format, it.Args); err != nil {
			return a, err
		}
		a.Text = ptr(b.String())
		a.Format = formatString(it.Format)
		a.Args = t.Values(it.Args)
	case program.ActSystem, program.ActFreopen:
		a.Text = ptr(it.Text)
	case program.ActPrinta:
		var b bytes.Buffer
		if err := t.aggp.Printa(&b, it.Format, it.Aggs...); err != nil {
			return a, err
		}
		a.Text = ptr(b.String())
		a.Format = formatString(it.Format)
		for _, ag := range it.Aggs {
			a.Aggregations = append(a.Aggregations, t.Aggregation(ag))
		}
	case program.ActPrint:
		var b bytes.Buffer
		if it.ByValue {
			if err := t.fmt.PrintValue(&b, it.Type, it.Data); err != nil {
				return a, err
			}
		} else if err := t.fmt.PrintType(&b, it.Addr, it.Type, it.Data, t.set.PrintSize); err != nil {
			return a, err
		} else {
			a.Address = ptr(it.Addr)
		}
		a.Text = ptr(b.String())
		if it.Type != nil {
			a.CType = it.Type.Name
		}
		a.Data = ptr(hex.EncodeToString(it.Data))
	case program.ActTracemem:
		a.Data = ptr(hex.EncodeToString(it.Data))
	case program.ActSetopt:
		a.Text = ptr(it.Text)
		a.Args = t.Values(it.Args)
		if it.Settings != nil {
			t.set = *it.Settings
			t.aggp.Sort = t.set.AggSort
		}
	case program.ActClear, program.ActTrunc, program.ActNormalize, program.ActDenormalize:
		if len(it.Aggs) > 0 {
			a.Aggregation = aggName(it.Aggs[0])
		}
		if it.Kind == program.ActTrunc || it.Kind == program.ActNormalize {
			a.N = ptr(it.N)
		}
	case program.ActExit, program.ActCommit, program.ActDiscard:
		a.N = ptr(it.N)
	}
	return a, nil
}

// formatString is the format's source text, nil without one.
func formatString(f *format.Format) *string {
	if f == nil {
		return nil
	}
	return ptr(f.Src)
}

// Values types values (nil for none).
func (t *Typer) Values(vs []program.Value) []Value {
	if len(vs) == 0 {
		return nil
	}
	out := make([]Value, len(vs))
	for i, v := range vs {
		out[i] = t.Value(v)
	}
	return out
}

// symKinds names program.SymKind values as the D actions do.
var symKinds = [...]string{"sym", "mod", "usym", "umod", "uaddr"}

// Value types a program.Value.
func (t *Typer) Value(v program.Value) Value {
	switch x := v.(type) {
	case program.Int:
		out := Value{Type: "int", Size: x.Size, Signed: ptr(x.Signed)}
		if x.Signed {
			out.Value = x.Int64()
		} else {
			out.Value = x.Uint64()
		}
		return out
	case program.Float:
		out := Value{Type: "float", Size: x.Size, Value: x.V}
		if math.IsNaN(x.V) || math.IsInf(x.V, 0) {
			// JSON has no NaN or infinities: their names, as strings.
			out.Value = formatFloat(x.V)
		}
		return out
	case program.String:
		return Value{Type: "string", Value: string(x)}
	case program.Bytes:
		return Value{Type: "bytes", Value: hex.EncodeToString(x.Data), CType: x.Type}
	case program.Verbatim:
		return Value{Type: "text", Value: string(x)}
	case program.Stack:
		frames := []Frame{}
		for _, pc := range x.PCs {
			if pc == 0 {
				break
			}
			frames = append(frames, t.frame(x.User, x.PID, pc))
		}
		out := Value{Type: "stack", User: ptr(x.User), Frames: &frames}
		if x.User {
			out.PID = x.PID
		}
		return out
	case program.Sym:
		user := x.Kind >= program.UserSym
		out := Value{Type: "sym", User: ptr(user)}
		if int(x.Kind) < len(symKinds) {
			out.Kind = symKinds[x.Kind]
		}
		if user {
			out.PID = x.PID
		}
		f := t.frame(user, x.PID, x.Addr)
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
func (t *Typer) frame(user bool, pid int, pc uint64) Frame {
	f := Frame{Address: pc}
	if t.sym == nil {
		return f
	}
	var ok bool
	if user {
		var obj string
		obj, f.Symbol, f.Offset, ok = t.sym.UserSym(pid, pc)
		f.Module = path.Base(obj)
		if obj == "" {
			f.Module = ""
		}
	} else {
		f.Module, f.Symbol, f.Offset, ok = t.sym.KernelSym(pc)
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

// Aggregation types an aggregation's entries, sorted as printed (the
// object printa() holds: no type, time or machine).
func (t *Typer) Aggregation(a *aggregate.Agg) *Aggregation {
	out := &Aggregation{Name: aggName(a), Function: a.Desc.Func.String(), Entries: []Entry{}}
	for _, e := range a.Sorted(t.set.AggSort) {
		en := Entry{Keys: t.Values(e.Key)}
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

// Final types an aggregation printa() did not print, as the object
// written at exit ("aggregation", stamped now, with the machine).
func (t *Typer) Final(a *aggregate.Agg) *Aggregation {
	o := t.Aggregation(a)
	o.Type, o.Timestamp, o.Machine = "aggregation", t.Stamp(), t.machine
	return o
}

// scalar is an aggregation result as an integer.
func scalar(v program.Value) int64 {
	if i, ok := v.(program.Int); ok {
		if i.Signed {
			return i.Int64()
		}
		return int64(i.Uint64())
	}
	return 0
}

// Fault types a fault.
func (t *Typer) Fault(f *output.Fault) *Fault {
	return &Fault{Fired: t.fired("fault", 0, f.CPU, f.Probe, f.Known, f.Clause), Fault: f.Name, Code: f.Code, Address: f.Addr, PC: f.PC}
}

// Error types a library error.
func (t *Typer) Error(e *output.Error) *Error {
	return &Error{Type: "error", Timestamp: t.Stamp(), Machine: t.machine,
		Probe: ProbeOf(e.Probe, e.Known), Clause: e.Clause, Message: e.Msg}
}

// Drop types a drop.
func (t *Typer) Drop(d *output.Drop) *Drop {
	return &Drop{Type: "drop", Timestamp: t.Stamp(), Machine: t.machine, Kind: d.Kind.Tag(),
		CPU: d.CPU, Count: d.Count}
}
