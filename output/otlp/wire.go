package otlp

import (
	"encoding/binary"
	"math"
)

// The protobuf wire format, as much of it as the OTLP requests dtrace
// sends use: varints, zigzag varints (sint32), fixed 64-bit values,
// and length-delimited fields (strings, bytes, packed repeated numbers,
// nested messages). Everything appends to a []byte. The messages are
// written field by field in the functions that build them (spans.go,
// metrics.go), field numbers from opentelemetry-proto's
// opentelemetry/proto/{common,resource,trace,metrics}/v1/*.proto. As
// proto3 encoders do, a scalar field that holds its zero value is left
// out, except in a oneof (AnyValue's value, a data point's as_int),
// whose member is written whatever it holds.

// The wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
)

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendTag(b []byte, num, typ int) []byte {
	return appendVarint(b, uint64(num)<<3|uint64(typ))
}

// varintField is an int64, uint64, uint32, enum or bool field.
func varintField(b []byte, num int, v uint64) []byte {
	return appendVarint(appendTag(b, num, wireVarint), v)
}

// sint32Field is a sint32 field: zigzag encoded.
func sint32Field(b []byte, num int, v int32) []byte {
	return varintField(b, num, uint64(uint32(v<<1)^uint32(v>>31)))
}

// fixed64Field is a fixed64, sfixed64 or double field.
func fixed64Field(b []byte, num int, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(appendTag(b, num, wireFixed64), v)
}

// bytesField is a string or bytes field.
func bytesField[T string | []byte](b []byte, num int, s T) []byte {
	b = appendVarint(appendTag(b, num, wireBytes), uint64(len(s)))
	return append(b, s...)
}

// Fields left out when zero.

func stringOpt(b []byte, num int, s string) []byte {
	if s == "" {
		return b
	}
	return bytesField(b, num, s)
}

func fixed64Opt(b []byte, num int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return fixed64Field(b, num, v)
}

// packedFixed64 is a packed repeated fixed64 (doubles given as their
// bits) field, left out when empty.
func packedFixed64(b []byte, num int, vs []uint64) []byte {
	if len(vs) == 0 {
		return b
	}
	b = appendVarint(appendTag(b, num, wireBytes), uint64(8*len(vs)))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

// packedDoubles is a packed repeated double field, left out when empty.
func packedDoubles(b []byte, num int, vs []float64) []byte {
	bits := make([]uint64, len(vs))
	for i, v := range vs {
		bits[i] = math.Float64bits(v)
	}
	return packedFixed64(b, num, bits)
}

// packedVarints is a packed repeated uint64 field, left out when empty.
func packedVarints(b []byte, num int, vs []uint64) []byte {
	if len(vs) == 0 {
		return b
	}
	n := 0
	for _, v := range vs {
		n += varintLen(v)
	}
	b = appendVarint(appendTag(b, num, wireBytes), uint64(n))
	for _, v := range vs {
		b = appendVarint(b, v)
	}
	return b
}

func varintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// begin starts a nested message in field num: its tag and a byte kept
// for its length, whose offset it returns for end.
func begin(b []byte, num int) ([]byte, int) {
	b = appendTag(b, num, wireBytes)
	return append(b, 0), len(b)
}

// end ends the nested message begun at: its length goes in the byte
// kept for it, the message moved up when the length needs more.
func end(b []byte, at int) []byte {
	n := len(b) - at - 1
	if n < 0x80 {
		b[at] = byte(n)
		return b
	}
	extra := varintLen(uint64(n)) - 1
	b = append(b, make([]byte, extra)...)
	copy(b[at+1+extra:], b[at+1:at+1+n])
	for i := 0; i < extra; i++ {
		b[at+i] = byte(n) | 0x80
		n >>= 7
	}
	b[at+extra] = byte(n)
	return b
}

// anyValue is an OTLP AnyValue: a string, an int or a bool.
type anyValue struct {
	kind byte // one of the value kinds below
	str  string
	num  int64
}

// The AnyValue kinds dtrace sends: their field numbers in the oneof.
const (
	valString = 1
	valBool   = 2
	valInt    = 3
)

// keyValue is an attribute.
type keyValue struct {
	key   string
	value anyValue
}

func strValue(s string) anyValue { return anyValue{kind: valString, str: s} }
func intValue(n int64) anyValue  { return anyValue{kind: valInt, num: n} }

func boolValue(v bool) anyValue {
	a := anyValue{kind: valBool}
	if v {
		a.num = 1
	}
	return a
}

func kv(k string, v anyValue) keyValue { return keyValue{key: k, value: v} }

// appendAttrs appends attributes as the repeated KeyValue field num.
func appendAttrs(b []byte, num int, attrs []keyValue) []byte {
	var at, vat int
	for _, a := range attrs {
		b, at = begin(b, num)
		b = stringOpt(b, 1, a.key)
		b, vat = begin(b, 2)
		switch a.value.kind {
		case valString:
			b = bytesField(b, valString, a.value.str)
		case valBool, valInt:
			b = varintField(b, int(a.value.kind), uint64(a.value.num))
		}
		b = end(b, vat)
		b = end(b, at)
	}
	return b
}

// appendResource appends a Resource of attrs as field 1 (of
// ResourceSpans and ResourceMetrics), and then field 2's start: a
// ScopeSpans or ScopeMetrics that holds the instrumentation scope
// dtrace of version, in its field 1, and is to hold the spans or
// metrics, in its field 2; end(b, at) ends it.
func appendResource(b []byte, attrs []keyValue, version string) (_ []byte, at int) {
	b, r := begin(b, 1)
	b = appendAttrs(b, 1, attrs)
	b = end(b, r)
	b, at = begin(b, 2)
	b, sc := begin(b, 1)
	b = bytesField(b, 1, "dtrace")
	b = stringOpt(b, 2, version)
	return end(b, sc), at
}
