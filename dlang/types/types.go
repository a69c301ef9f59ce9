// Package types is the C/D type model of the D language checker: LP64
// (x86-64) integers, floating-point types, pointers, arrays, D strings,
// structs and unions with bit-fields, enumerations, typedefs, qualifiers,
// function types and D's special types (stack, _symaddr, <DYN>, ...).
//
// Types are values of the Type interface. Struct, union and enum types have
// identity (compare pointers); the others compare structurally through
// Identical. Names print exactly as dtrace prints them in its messages:
// "char *", "struct foo", "int [10]", "uint64_t".
package types

import (
	"strconv"
	"strings"

	"github.com/dtrace-go/dtrace/dlang/syntax"
)

// Kind classifies a type.
type Kind uint8

// Kinds of types.
const (
	KindInvalid   Kind = iota
	KindVoid           // void
	KindInt            // char, short, int, long, long long, _Bool (signed or not)
	KindFloat          // float, double, long double
	KindPointer        // T *
	KindArray          // T [n]
	KindString         // D string
	KindStruct         // struct tag
	KindUnion          // union tag
	KindEnum           // enum tag
	KindTypedef        // a named alias
	KindQualified      // const/volatile/restrict T
	KindFunc           // function type
	KindOpaque         // a named type whose definition is unknown (no kernel types)
	KindDyn            // D's <DYN>: the type of dynamic identifiers
	KindStack          // stack(), ustack(), jstack() results
	KindSymaddr        // sym(), func(), mod() results: a kernel address
	KindUsymaddr       // usym(), ufunc(), umod(), uaddr() results
	KindAgg            // an aggregation used as a value (printa, clear, ...)
)

var kindNames = [...]string{"invalid", "void", "integer", "float", "pointer", "array", "string",
	"struct", "union", "enum", "typedef", "qualified", "function", "opaque", "dynamic",
	"stack", "_symaddr", "_usymaddr", "aggregation"}

// String returns a short name of the kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Type is a C or D type.
type Type interface {
	// Kind returns the type's kind; typedefs and qualified types report
	// KindTypedef and KindQualified (see Underlying).
	Kind() Kind
	// Size returns the size in bytes; 0 for void, functions and
	// incomplete types.
	Size() int64
	// Align returns the alignment in bytes (at least 1).
	Align() int64
	// String returns the type's name as dtrace prints it.
	String() string
}

// Underlying returns t with every typedef and qualifier removed.
func Underlying(t Type) Type {
	for {
		switch u := t.(type) {
		case *Typedef:
			t = u.Type
		case *Qualified:
			t = u.Type
		default:
			return t
		}
	}
}

// Qual is a set of C type qualifiers.
type Qual uint8

// Qualifier bits: syntax's.
const (
	Const    Qual = syntax.Const
	Volatile Qual = syntax.Volatile
	Restrict Qual = syntax.Restrict
)

// String returns the qualifiers as C writes them ("const volatile").
func (q Qual) String() string { return strings.Join(syntax.QualNames(int(q)), " ") }

// Basic is void, an integer type or a floating-point type.
type Basic struct {
	K      Kind   // KindVoid, KindInt or KindFloat
	Name   string // C name: "unsigned long"
	Bytes  int64  // size in bytes
	Signed bool   // for integers
	Char   bool   // a character type (printed as a character by %c)
	Bits   int    // bit-field width when this is a bit-field's type; 0 otherwise
}

// Kind implements Type.
func (b *Basic) Kind() Kind { return b.K }

// Size implements Type.
func (b *Basic) Size() int64 { return b.Bytes }

// Align implements Type.
func (b *Basic) Align() int64 {
	if b.Bytes <= 0 {
		return 1
	}
	if b.Bytes > 8 {
		return 16
	}
	return b.Bytes
}

// String implements Type.
func (b *Basic) String() string { return b.Name }

// The C intrinsic types (LP64).
var (
	Void             = &Basic{K: KindVoid, Name: "void"}
	Char             = &Basic{K: KindInt, Name: "char", Bytes: 1, Signed: true, Char: true}
	SignedChar       = &Basic{K: KindInt, Name: "signed char", Bytes: 1, Signed: true, Char: true}
	UnsignedChar     = &Basic{K: KindInt, Name: "unsigned char", Bytes: 1, Char: true}
	Short            = &Basic{K: KindInt, Name: "short", Bytes: 2, Signed: true}
	UnsignedShort    = &Basic{K: KindInt, Name: "unsigned short", Bytes: 2}
	Int              = &Basic{K: KindInt, Name: "int", Bytes: 4, Signed: true}
	UnsignedInt      = &Basic{K: KindInt, Name: "unsigned int", Bytes: 4}
	Long             = &Basic{K: KindInt, Name: "long", Bytes: 8, Signed: true}
	UnsignedLong     = &Basic{K: KindInt, Name: "unsigned long", Bytes: 8}
	LongLong         = &Basic{K: KindInt, Name: "long long", Bytes: 8, Signed: true}
	UnsignedLongLong = &Basic{K: KindInt, Name: "unsigned long long", Bytes: 8}
	Bool             = &Basic{K: KindInt, Name: "_Bool", Bytes: 1}
	Float            = &Basic{K: KindFloat, Name: "float", Bytes: 4}
	Double           = &Basic{K: KindFloat, Name: "double", Bytes: 8}
	LongDouble       = &Basic{K: KindFloat, Name: "long double", Bytes: 16}
)

// BitField returns the integer type dtrace gives a bit-field of width bits
// declared with base type t: same name and signedness, the smallest power
// of two bytes that holds the bits.
func BitField(t *Basic, bits int) *Basic {
	n := int64(1)
	for n*8 < int64(bits) {
		n *= 2
	}
	c := *t
	c.Bytes = n
	c.Bits = bits
	return &c
}

// Pointer is a pointer to Elem.
type Pointer struct {
	Elem Type
}

// NewPointer returns a pointer to elem.
func NewPointer(elem Type) *Pointer { return &Pointer{Elem: elem} }

// Kind implements Type.
func (*Pointer) Kind() Kind { return KindPointer }

// Size implements Type.
func (*Pointer) Size() int64 { return 8 }

// Align implements Type.
func (*Pointer) Align() int64 { return 8 }

// String implements Type.
func (p *Pointer) String() string { return TypeString(p) }

// Array is a C array of Len elements.
type Array struct {
	Elem Type
	Len  int64 // 0 for [] (an incomplete array)
}

// Kind implements Type.
func (*Array) Kind() Kind { return KindArray }

// Size implements Type.
func (a *Array) Size() int64 { return a.Len * a.Elem.Size() }

// Align implements Type.
func (a *Array) Align() int64 { return a.Elem.Align() }

// String implements Type.
func (a *Array) String() string { return TypeString(a) }

// String is D's string type: a NUL-terminated character buffer of Bytes
// bytes (the strsize option).
type String struct {
	Bytes int64
}

// Kind implements Type.
func (*String) Kind() Kind { return KindString }

// Size implements Type.
func (s *String) Size() int64 { return s.Bytes }

// Align implements Type.
func (*String) Align() int64 { return 1 }

// String implements Type.
func (*String) String() string { return "string" }

// Field is a member of a struct or union.
type Field struct {
	Name   string // "" for an anonymous struct/union member
	Type   Type
	Offset int64 // in bits from the start of the struct
	Bits   int   // bit-field width; 0 if not a bit-field
}

// Struct is a struct or union type. A struct declared but not defined
// (`struct foo;` or a reference to an unknown tag) has Complete false;
// defining it later completes the same value.
type Struct struct {
	Union     bool
	Tag       string // "" when anonymous
	Module    string // the module that defined it ("D" for the program, "vmlinux"...)
	Fields    []*Field
	Bytes     int64
	Alignment int64 // alignment; 0 means compute from the fields
	Complete  bool
	// Forward marks a type known only from a reference (`struct foo`)
	// whose definition has not started; dtrace prints such a forward
	// declaration as "struct tag" whatever its kind.
	Forward bool
}

// Kind implements Type.
func (s *Struct) Kind() Kind {
	if s.Union {
		return KindUnion
	}
	return KindStruct
}

// Size implements Type.
func (s *Struct) Size() int64 { return s.Bytes }

// Align implements Type.
func (s *Struct) Align() int64 {
	if s.Alignment > 0 {
		return s.Alignment
	}
	a := int64(1)
	for _, f := range s.Fields {
		if fa := f.Type.Align(); fa > a {
			a = fa
		}
	}
	return a
}

// String implements Type.
func (s *Struct) String() string {
	kw := "struct"
	if s.Union {
		kw = "union"
	}
	if s.Forward {
		kw = "struct"
	}
	return kw + " " + s.Tag
}

// Field finds a member by name, looking into anonymous members as C11
// does. The returned offset is in bits from the start of s.
func (s *Struct) Field(name string) (f *Field, offset int64, ok bool) {
	for _, m := range s.Fields {
		if m.Name == name {
			return m, m.Offset, true
		}
		if m.Name == "" {
			if in, ok := Underlying(m.Type).(*Struct); ok {
				if f, off, ok := in.Field(name); ok {
					return f, m.Offset + off, true
				}
			}
		}
	}
	return nil, 0, false
}

// AddField appends a member to a struct being defined, placing it as
// dtrace's type container does: every member starts on a byte boundary
// aligned for its type (bit-fields are not packed together), union members
// at offset 0; the size is the end of the last member (not rounded up to
// the alignment). It reports false if the name is already used.
func (s *Struct) AddField(name string, t Type, bits int) bool {
	if name != "" {
		if _, _, dup := s.Field(name); dup {
			return false
		}
	}
	var off int64
	size := t.Size()
	align := t.Align()
	if bits > 0 {
		n := int64(1)
		for n*8 < int64(bits) {
			n *= 2
		}
		size, align = n, n
	}
	if !s.Union && len(s.Fields) > 0 {
		last := s.Fields[len(s.Fields)-1]
		end := last.Offset
		if last.Bits > 0 {
			end += int64(last.Bits)
		} else {
			end += last.Type.Size() * 8
		}
		end = (end + 7) / 8
		end = (end + align - 1) / align * align
		off = end * 8
	}
	s.Fields = append(s.Fields, &Field{Name: name, Type: t, Offset: off, Bits: bits})
	if e := off/8 + size; e > s.Bytes {
		s.Bytes = e
	}
	return true
}

// Enumerator is a named constant of an enumeration.
type Enumerator struct {
	Name  string
	Value int64
}

// Enum is an enumeration type; its values are ints.
type Enum struct {
	Tag      string
	Module   string
	Values   []Enumerator
	Bytes    int64 // 4 unless the kernel says otherwise
	Complete bool
}

// Kind implements Type.
func (*Enum) Kind() Kind { return KindEnum }

// Size implements Type.
func (e *Enum) Size() int64 {
	if e.Bytes == 0 {
		return 4
	}
	return e.Bytes
}

// Align implements Type.
func (e *Enum) Align() int64 { return e.Size() }

// String implements Type.
func (e *Enum) String() string {
	return "enum " + e.Tag
}

// Lookup finds an enumerator by name.
func (e *Enum) Lookup(name string) (int64, bool) {
	for _, v := range e.Values {
		if v.Name == name {
			return v.Value, true
		}
	}
	return 0, false
}

// Typedef is a named alias of Type.
type Typedef struct {
	Name   string
	Module string // "C", "D", "vmlinux", ...
	Type   Type
}

// Kind implements Type.
func (*Typedef) Kind() Kind { return KindTypedef }

// Size implements Type.
func (t *Typedef) Size() int64 { return t.Type.Size() }

// Align implements Type.
func (t *Typedef) Align() int64 { return t.Type.Align() }

// String implements Type.
func (t *Typedef) String() string { return t.Name }

// Qualified is Type with qualifiers.
type Qualified struct {
	Quals Qual
	Type  Type
}

// Kind implements Type.
func (*Qualified) Kind() Kind { return KindQualified }

// Size implements Type.
func (q *Qualified) Size() int64 { return q.Type.Size() }

// Align implements Type.
func (q *Qualified) Align() int64 { return q.Type.Align() }

// String implements Type.
func (q *Qualified) String() string { return TypeString(q) }

// Func is a function type.
type Func struct {
	Result   Type
	Params   []Type
	Variadic bool
}

// Kind implements Type.
func (*Func) Kind() Kind { return KindFunc }

// Size implements Type.
func (*Func) Size() int64 { return 0 }

// Align implements Type.
func (*Func) Align() int64 { return 1 }

// String implements Type.
func (f *Func) String() string { return TypeString(f) }

// Special is one of D's types that have no C equivalent (KindOpaque,
// KindDyn, KindStack, KindSymaddr, KindUsymaddr, KindAgg), or a kernel type
// known only by name (KindOpaque).
type Special struct {
	K     Kind
	Name  string
	Bytes int64
}

// Kind implements Type.
func (s *Special) Kind() Kind { return s.K }

// Size implements Type.
func (s *Special) Size() int64 { return s.Bytes }

// Align implements Type.
func (s *Special) Align() int64 {
	if s.Bytes >= 8 {
		return 8
	}
	return 1
}

// String implements Type.
func (s *Special) String() string { return s.Name }

// D's special types.
var (
	Dyn      = &Special{K: KindDyn, Name: "<DYN>"}
	Stack    = &Special{K: KindStack, Name: "stack", Bytes: 8}
	Symaddr  = &Special{K: KindSymaddr, Name: "_symaddr", Bytes: 8}
	Usymaddr = &Special{K: KindUsymaddr, Name: "_usymaddr", Bytes: 8}
	Agg      = &Special{K: KindAgg, Name: "aggregation"}
)

// NewOpaque returns a placeholder for a kernel type known only by name
// ("struct task_struct") when no kernel type information is available.
func NewOpaque(name string) *Special { return &Special{K: KindOpaque, Name: name} }

// ModuleOf is the module that defined t when t is a struct or union,
// an enum or a typedef ("C", "D", "vmlinux", ...), and "" for any other
// type.
func ModuleOf(t Type) string {
	switch u := t.(type) {
	case *Struct:
		return u.Module
	case *Enum:
		return u.Module
	case *Typedef:
		return u.Module
	}
	return ""
}
