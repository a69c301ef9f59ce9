// Package pprof writes the stack aggregations of a program (those with a
// stack() or ustack() key) as a gzipped pprof profile: one sample type per
// aggregation, its value the aggregation's (for quantizations, the number
// of values counted), one sample per entry, the entry's other keys as
// labels (key0, key1, ... by position). Locations carry the function and,
// for user frames whose object has DWARF line tables, the file and line.
package pprof

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// builder accumulates the profile's tables.
type builder struct {
	p     *Profile
	sym   format.Symbolizer
	locs  map[locKey]*Location
	funcs map[[2]string]*Function
	maps  map[string]*Mapping
}

type locKey struct {
	user bool
	pid  int
	pc   uint64
	leaf bool
}

// Build makes the profile of aggs' stack aggregations; sym resolves
// frames. It returns nil when none has a stack key.
func Build(aggs []*aggregate.Agg, sym format.Symbolizer, o aggregate.SortOptions) *Profile {
	b := &builder{p: &Profile{}, sym: sym, locs: map[locKey]*Location{},
		funcs: map[[2]string]*Function{}, maps: map[string]*Mapping{}}
	var stackAggs []*aggregate.Agg
	for _, a := range aggs {
		if a != nil && output.HasStack(a) {
			stackAggs = append(stackAggs, a)
		}
	}
	if len(stackAggs) == 0 {
		return nil
	}
	for _, a := range stackAggs {
		name := strings.TrimPrefix(a.Desc.Name, "@")
		if name == "" {
			name = "@"
		}
		b.p.SampleType = append(b.p.SampleType, &ValueType{Type: name, Unit: a.Desc.Func.String()})
	}
	b.p.DefaultSampleType = b.p.SampleType[0].Type
	for i, a := range stackAggs {
		for _, e := range a.Sorted(o) {
			s := &Sample{Value: make([]int64, len(stackAggs))}
			s.Value[i] = output.Value(a, e)
			b.sample(s, e.Key)
			b.p.Sample = append(b.p.Sample, s)
		}
	}
	return b.p
}

// sample fills a sample's locations (innermost first, as pprof wants,
// from every stack key in order) and labels.
func (b *builder) sample(s *Sample, key []program.Value) {
	var stacks []program.Stack
	for i, k := range key {
		label := fmt.Sprintf("key%d", i)
		switch x := k.(type) {
		case program.Stack:
			stacks = append(stacks, x)
		case program.Int:
			if s.NumLabel == nil {
				s.NumLabel = map[string][]int64{}
			}
			if x.Signed {
				s.NumLabel[label] = []int64{x.Int64()}
			} else {
				s.NumLabel[label] = []int64{int64(x.Uint64())}
			}
		default:
			if s.Label == nil {
				s.Label = map[string][]string{}
			}
			s.Label[label] = []string{keyText(x, b.sym)}
		}
	}
	// Kernel stacks first: a kernel stack recorded with a user stack
	// runs on top of it. Within a stack, innermost first.
	for _, user := range []bool{false, true} {
		for _, st := range stacks {
			if st.User != user {
				continue
			}
			for j, pc := range st.PCs {
				if pc == 0 {
					break
				}
				s.Location = append(s.Location, b.location(st, pc, j == 0))
			}
		}
	}
}

func keyText(v program.Value, sym format.Symbolizer) string {
	switch x := v.(type) {
	case program.String:
		return string(x)
	case program.Sym:
		return output.FrameName(sym, x.Kind >= program.UserSym, x.PID, x.Addr)
	case program.Bytes:
		return fmt.Sprintf("%x", x.Data)
	case program.Float:
		return fmt.Sprint(x.V)
	}
	return fmt.Sprint(v)
}

// location is the location of one frame; leaf is set for the innermost,
// whose pc is not a return address.
func (b *builder) location(st program.Stack, pc uint64, leaf bool) *Location {
	k := locKey{st.User, st.PID, pc, leaf}
	if !st.User {
		k.pid = 0
	}
	if l := b.locs[k]; l != nil {
		return l
	}
	l := &Location{ID: uint64(len(b.p.Location) + 1), Address: pc}
	b.locs[k] = l
	b.p.Location = append(b.p.Location, l)
	var obj, fn string
	var ok bool
	if b.sym != nil {
		if st.User {
			obj, fn, _, ok = b.sym.UserSym(st.PID, pc)
		} else {
			obj, fn, _, ok = b.sym.KernelSym(pc)
		}
	}
	if !ok {
		return l
	}
	if obj != "" {
		l.Mapping = b.mapping(obj)
	}
	if fn == "" {
		return l
	}
	file, line := "", int64(0)
	if st.User {
		file, line = b.lineOf(st.PID, pc, leaf)
	}
	l.Line = []Line{{Function: b.function(obj, fn, file), Line: line}}
	return l
}

func (b *builder) mapping(obj string) *Mapping {
	if m := b.maps[obj]; m != nil {
		return m
	}
	m := &Mapping{ID: uint64(len(b.p.Mapping) + 1), File: obj, HasFunctions: true}
	b.maps[obj] = m
	b.p.Mapping = append(b.p.Mapping, m)
	return m
}

func (b *builder) function(obj, fn, file string) *Function {
	k := [2]string{obj, fn}
	if f := b.funcs[k]; f != nil {
		if f.Filename == "" {
			f.Filename = file
		}
		return f
	}
	f := &Function{ID: uint64(len(b.p.Function) + 1), Name: fn, SystemName: fn, Filename: file}
	if f.Filename == "" && obj != "" {
		f.Filename = path.Base(obj)
	}
	b.funcs[k] = f
	b.p.Function = append(b.p.Function, f)
	return f
}

// lineOf finds the source line of pc in process pid through the
// symbolizer (the DWARF of the object or its debug file); a return
// address (not leaf) is looked up one byte back, in the call
// instruction.
func (b *builder) lineOf(pid int, pc uint64, leaf bool) (string, int64) {
	ls, ok := b.sym.(format.LineSymbolizer)
	if !ok {
		return "", 0
	}
	if !leaf && pc > 0 {
		pc--
	}
	file, line, ok := ls.UserLine(pid, pc)
	if !ok {
		return "", 0
	}
	return file, int64(line)
}

// Write writes the profile of aggs' stack aggregations to w, gzipped. With
// no stack aggregation it writes a profile without samples.
func Write(w io.Writer, aggs []*aggregate.Agg, sym format.Symbolizer, o aggregate.SortOptions) error {
	p := Build(aggs, sym, o)
	if p == nil {
		p = &Profile{SampleType: []*ValueType{{Type: "samples", Unit: "count"}}}
	}
	return p.Write(w)
}
