package agent

import (
	"fmt"
	"strings"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/output/jsonrec"
	"github.com/dtrace-go/dtrace/program"
)

// Record is one record of a probe firing in the guest.
type Record struct {
	// Time is when it fired, the guest's CLOCK_MONOTONIC nanoseconds;
	// PID, TID and CPU are the guest's.
	Time          uint64 `json:"time"`
	PID, TID, CPU int
	// Process and Thread are their names in the guest.
	Process string `json:"process,omitempty"`
	Thread  string `json:"thread,omitempty"`
	Probe   jsonrec.Probe
	Clause  int `json:"clause"`
	// Text is the record as dtrace(1M) prints it in the guest.
	Text string `json:"text"`
	// Actions are its actions typed as in -x oformat=json.
	Actions []jsonrec.Action `json:"actions,omitempty"`
}

// Aggs holds the guest's aggregations at the end.
type Aggs struct {
	Aggs []Agg `json:"aggs"`
}

// Agg is one aggregation: its description and entries, each with its
// key and its data in the function's slot layout (aggregate/doc.go).
type Agg struct {
	Desc    aggregate.Desc `json:"desc"`
	Normal  uint64         `json:"normal"`
	Printed bool           `json:"printed,omitempty"`
	Entries []AggEntry     `json:"entries"`
}

// AggEntry is one key of an aggregation.
type AggEntry struct {
	Key  []Value `json:"key"`
	Data []int64 `json:"data"`
}

// Value is one key value: an integer, a string, or what the guest
// printed for any other (stacks and symbols resolve only there).
type Value struct {
	Int  *program.Int `json:"int,omitempty"`
	Str  *string      `json:"str,omitempty"`
	Text *string      `json:"text,omitempty"`
}

// wireAggs turns aggregations into their messages; sym resolves stack
// and symbol keys into text.
func wireAggs(aggs []*aggregate.Agg, sym format.Symbolizer) Aggs {
	out := Aggs{Aggs: []Agg{}}
	for _, a := range aggs {
		if a == nil {
			continue
		}
		w := Agg{Desc: *a.Desc, Normal: a.Normal, Printed: a.Printed, Entries: []AggEntry{}}
		for _, e := range a.Entries() {
			we := AggEntry{Data: e.Data}
			for _, k := range e.Key {
				we.Key = append(we.Key, wireValue(k, sym))
			}
			w.Entries = append(w.Entries, we)
		}
		out.Aggs = append(out.Aggs, w)
	}
	return out
}

func wireValue(v program.Value, sym format.Symbolizer) Value {
	switch x := v.(type) {
	case program.Int:
		return Value{Int: &x}
	case program.String:
		s := string(x)
		return Value{Str: &s}
	case program.Stack:
		var frames []string
		for _, pc := range x.PCs {
			if pc == 0 {
				break
			}
			frames = append(frames, frame(sym, x.User, x.PID, pc))
		}
		s := "\n" + strings.Join(frames, "\n")
		return Value{Text: &s}
	case program.Sym:
		s := frame(sym, x.Kind >= program.UserSym, x.PID, x.Addr)
		return Value{Text: &s}
	}
	s := fmt.Sprint(v)
	return Value{Text: &s}
}

// frame words one address as module`function+offset.
func frame(sym format.Symbolizer, user bool, pid int, pc uint64) string {
	if sym != nil {
		var mod, fn string
		var off uint64
		var ok bool
		if user {
			mod, fn, off, ok = sym.UserSym(pid, pc)
		} else {
			mod, fn, off, ok = sym.KernelSym(pc)
		}
		if ok && fn != "" {
			mod = mod[strings.LastIndexByte(mod, '/')+1:]
			if off == 0 {
				return mod + "`" + fn
			}
			return fmt.Sprintf("%s`%s+0x%x", mod, fn, off)
		}
	}
	return fmt.Sprintf("0x%x", pc)
}

// value is a key value back on the host.
func (v Value) value() program.Value {
	switch {
	case v.Int != nil:
		return *v.Int
	case v.Str != nil:
		return program.String(*v.Str)
	case v.Text != nil:
		return program.Verbatim(*v.Text)
	}
	return program.Verbatim("")
}

// MachineAggs are one machine's final aggregations.
type MachineAggs struct {
	Machine string
	Aggs    []Agg
}

// Merge returns the host's aggregations with every guest's merged in:
// each aggregation's keys get the machine's name as their first key
// ("host" for the host's own entries), so that each machine's values stay
// apart and print under its name.
func Merge(host string, aggs []*aggregate.Agg, guests []MachineAggs) []*aggregate.Agg {
	var out []*aggregate.Agg
	byID := map[int]*aggregate.Agg{}
	add := func(d aggregate.Desc, normal uint64, printed bool) *aggregate.Agg {
		if m := byID[d.ID]; m != nil {
			return m
		}
		m := aggregate.New(&d)
		m.Normal, m.Printed = normal, printed
		byID[d.ID] = m
		out = append(out, m)
		return m
	}
	for _, a := range aggs {
		if a == nil {
			continue
		}
		m := add(*a.Desc, a.Normal, a.Printed)
		for _, e := range a.Entries() {
			m.Add(append([]program.Value{program.String(host)}, e.Key...), e.Data)
		}
	}
	for _, g := range guests {
		for _, a := range g.Aggs {
			m := add(a.Desc, a.Normal, a.Printed)
			for _, e := range a.Entries {
				key := []program.Value{program.String(g.Machine)}
				for _, k := range e.Key {
					key = append(key, k.value())
				}
				m.Add(key, e.Data)
			}
		}
	}
	sortByID(out)
	return out
}

func sortByID(aggs []*aggregate.Agg) {
	for i := 1; i < len(aggs); i++ {
		for j := i; j > 0 && aggs[j].Desc.ID < aggs[j-1].Desc.ID; j-- {
			aggs[j], aggs[j-1] = aggs[j-1], aggs[j]
		}
	}
}
