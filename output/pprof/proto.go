package pprof

import (
	"compress/gzip"
	"encoding/binary"
	"io"
	"sort"
)

// The profile's tables, as pprof's profile.proto has them (the part this
// package fills). They are encoded here rather than with
// github.com/google/pprof/profile, whose package initialisation (regular
// expressions compiled for symbol names it never sees here) every run of
// dtrace paid, with or without -x pprof.

// Profile is a pprof profile: IDs are 1-based indexes into Location,
// Function and Mapping.
type Profile struct {
	SampleType        []*ValueType
	DefaultSampleType string
	Sample            []*Sample
	Mapping           []*Mapping
	Location          []*Location
	Function          []*Function
}

// ValueType names a sample value and its unit.
type ValueType struct {
	Type, Unit string
}

// Sample is one aggregation entry: its stack (innermost first), one value
// per sample type, and its other keys as labels.
type Sample struct {
	Location []*Location
	Value    []int64
	Label    map[string][]string
	NumLabel map[string][]int64
}

// Mapping is an object frames were found in.
type Mapping struct {
	ID           uint64
	File         string
	HasFunctions bool
}

// Location is one frame's address, and its function when known.
type Location struct {
	ID      uint64
	Mapping *Mapping
	Address uint64
	Line    []Line
}

// Line is a location's function and source line.
type Line struct {
	Function *Function
	Line     int64
}

// Function is a function frames were in.
type Function struct {
	ID               uint64
	Name, SystemName string
	Filename         string
}

// Write writes the profile gzipped, as pprof reads it.
func (p *Profile) Write(w io.Writer) error {
	e := encoder{strs: map[string]int64{"": 0}, table: []string{""}}
	out := e.profile(p)
	zw := gzip.NewWriter(w)
	if _, err := zw.Write(out); err != nil {
		return err
	}
	return zw.Close()
}

// encoder writes protobuf messages and keeps the string table.
type encoder struct {
	strs  map[string]int64
	table []string
}

func (e *encoder) str(s string) int64 {
	if i, ok := e.strs[s]; ok {
		return i
	}
	i := int64(len(e.table))
	e.strs[s] = i
	e.table = append(e.table, s)
	return i
}

// Protobuf wire types.
const (
	wireVarint = 0
	wireBytes  = 2
)

func tag(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field<<3|wire))
}

// varint appends a varint field; zero, the default, is left out.
func varint(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.AppendUvarint(tag(b, field, wireVarint), v)
}

func bytesField(b []byte, field int, msg []byte) []byte {
	b = binary.AppendUvarint(tag(b, field, wireBytes), uint64(len(msg)))
	return append(b, msg...)
}

// packed appends a packed repeated varint field.
func packed(b []byte, field int, vs []uint64) []byte {
	if len(vs) == 0 {
		return b
	}
	var m []byte
	for _, v := range vs {
		m = binary.AppendUvarint(m, v)
	}
	return bytesField(b, field, m)
}

func (e *encoder) profile(p *Profile) []byte {
	var b []byte
	for _, vt := range p.SampleType {
		b = bytesField(b, 1, e.valueType(vt))
	}
	for _, s := range p.Sample {
		b = bytesField(b, 2, e.sample(s))
	}
	for _, m := range p.Mapping {
		var mb []byte
		mb = varint(mb, 1, m.ID)
		mb = varint(mb, 5, uint64(e.str(m.File)))
		if m.HasFunctions {
			mb = varint(mb, 7, 1)
		}
		b = bytesField(b, 3, mb)
	}
	for _, l := range p.Location {
		var lb []byte
		lb = varint(lb, 1, l.ID)
		if l.Mapping != nil {
			lb = varint(lb, 2, l.Mapping.ID)
		}
		lb = varint(lb, 3, l.Address)
		for _, ln := range l.Line {
			var nb []byte
			if ln.Function != nil {
				nb = varint(nb, 1, ln.Function.ID)
			}
			nb = varint(nb, 2, uint64(ln.Line))
			lb = bytesField(lb, 4, nb)
		}
		b = bytesField(b, 4, lb)
	}
	for _, f := range p.Function {
		var fb []byte
		fb = varint(fb, 1, f.ID)
		fb = varint(fb, 2, uint64(e.str(f.Name)))
		fb = varint(fb, 3, uint64(e.str(f.SystemName)))
		fb = varint(fb, 4, uint64(e.str(f.Filename)))
		b = bytesField(b, 5, fb)
	}
	def := e.str(p.DefaultSampleType)
	for _, s := range e.table {
		b = bytesField(b, 6, []byte(s))
	}
	return varint(b, 14, uint64(def))
}

func (e *encoder) valueType(vt *ValueType) []byte {
	var b []byte
	b = varint(b, 1, uint64(e.str(vt.Type)))
	return varint(b, 2, uint64(e.str(vt.Unit)))
}

func (e *encoder) sample(s *Sample) []byte {
	var b []byte
	ids := make([]uint64, len(s.Location))
	for i, l := range s.Location {
		ids[i] = l.ID
	}
	b = packed(b, 1, ids)
	vals := make([]uint64, len(s.Value))
	for i, v := range s.Value {
		vals[i] = uint64(v)
	}
	b = packed(b, 2, vals)
	for _, k := range sortedKeys(s.Label) {
		for _, v := range s.Label[k] {
			var lb []byte
			lb = varint(lb, 1, uint64(e.str(k)))
			lb = varint(lb, 2, uint64(e.str(v)))
			b = bytesField(b, 3, lb)
		}
	}
	for _, k := range sortedKeys(s.NumLabel) {
		for _, v := range s.NumLabel[k] {
			var lb []byte
			lb = varint(lb, 1, uint64(e.str(k)))
			// num is an int64: negative values take ten bytes.
			lb = binary.AppendUvarint(tag(lb, 3, wireVarint), uint64(v))
			b = bytesField(b, 3, lb)
		}
	}
	return b
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
