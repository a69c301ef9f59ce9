package types

import "sort"

// Scope holds the named types of one module, keyed by their C spelling:
// "int", "unsigned long", "uint64_t", "struct foo", "union u", "enum e".
// DTrace keeps types in containers per module: "C" (intrinsics), "D"
// (D's typedefs and everything a program declares), and one per kernel
// module ("vmlinux", ...) which a Lookup provides.
type Scope struct {
	Module string
	names  map[string]Type
}

// NewScope returns an empty scope for module.
func NewScope(module string) *Scope { return &Scope{Module: module, names: map[string]Type{}} }

// Lookup returns the type with the C name name, or nil.
func (s *Scope) Lookup(name string) Type {
	if s == nil {
		return nil
	}
	return s.names[name]
}

// Insert adds or replaces the type named name.
func (s *Scope) Insert(name string, t Type) { s.names[name] = t }

// Names returns the names in the scope, sorted.
func (s *Scope) Names() []string {
	n := make([]string, 0, len(s.names))
	for k := range s.names {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Lookup finds types that live outside the program, such as the kernel's
// types from BTF. The package ktypes implements it; the checker calls it
// after the program's own scopes.
type Lookup interface {
	// LookupType returns the type with C name name ("task_struct" is
	// written "struct task_struct"; typedefs by their name) in module, or
	// in any module searched in the usual order ("vmlinux" first) when
	// module is "". It returns nil if there is no such type.
	LookupType(module, name string) Type
}

// The D typedefs (LP64) that every program sees, in addition to the C
// intrinsic types.
var (
	Int8      = &Typedef{Name: "int8_t", Module: "D", Type: SignedChar}
	Int16     = &Typedef{Name: "int16_t", Module: "D", Type: Short}
	Int32     = &Typedef{Name: "int32_t", Module: "D", Type: Int}
	Int64     = &Typedef{Name: "int64_t", Module: "D", Type: Long}
	Intptr    = &Typedef{Name: "intptr_t", Module: "D", Type: Long}
	Ssize     = &Typedef{Name: "ssize_t", Module: "D", Type: Long}
	Uint8     = &Typedef{Name: "uint8_t", Module: "D", Type: UnsignedChar}
	Uint16    = &Typedef{Name: "uint16_t", Module: "D", Type: UnsignedShort}
	Uint32    = &Typedef{Name: "uint32_t", Module: "D", Type: UnsignedInt}
	Uint64    = &Typedef{Name: "uint64_t", Module: "D", Type: UnsignedLong}
	Uchar     = &Typedef{Name: "uchar_t", Module: "D", Type: UnsignedChar}
	Ushort    = &Typedef{Name: "ushort_t", Module: "D", Type: UnsignedShort}
	Uint      = &Typedef{Name: "uint_t", Module: "D", Type: UnsignedInt}
	Ulong     = &Typedef{Name: "ulong_t", Module: "D", Type: UnsignedLong}
	ULongLong = &Typedef{Name: "u_longlong_t", Module: "D", Type: UnsignedLongLong}
	Ptrdiff   = &Typedef{Name: "ptrdiff_t", Module: "D", Type: Long}
	Uintptr   = &Typedef{Name: "uintptr_t", Module: "D", Type: UnsignedLong}
	SizeT     = &Typedef{Name: "size_t", Module: "D", Type: UnsignedLong}
	ID        = &Typedef{Name: "id_t", Module: "D", Type: Int}
	Pid       = &Typedef{Name: "pid_t", Module: "D", Type: Int}
)

// Kernel typedefs that D's builtins use. They normally come from the
// kernel's BTF; these stand in when no Lookup is configured or it lacks
// them.
var (
	Uid = &Typedef{Name: "uid_t", Module: "vmlinux", Type: UnsignedInt}
	Gid = &Typedef{Name: "gid_t", Module: "vmlinux", Type: UnsignedInt}
	Dev = &Typedef{Name: "dev_t", Module: "vmlinux", Type: UnsignedInt}
)

// CScope returns a new scope of the C intrinsic types, every spelling
// that dtrace accepts ("signed", "long int" is normalized by the checker).
func CScope() *Scope {
	s := NewScope("C")
	for _, b := range []*Basic{Void, Char, SignedChar, UnsignedChar, Short, UnsignedShort,
		Int, UnsignedInt, Long, UnsignedLong, LongLong, UnsignedLongLong, Bool,
		Float, Double, LongDouble} {
		s.Insert(b.Name, b)
	}
	s.Insert("signed", Int)
	s.Insert("unsigned", UnsignedInt)
	s.Insert("signed short", Short)
	s.Insert("signed int", Int)
	s.Insert("signed long", Long)
	s.Insert("signed long long", LongLong)
	return s
}

// DScope returns a new scope of D's typedefs, with string of strsize bytes.
func DScope(strsize int64) *Scope {
	s := NewScope("D")
	for _, t := range []*Typedef{Int8, Int16, Int32, Int64, Intptr, Ssize, Uint8, Uint16,
		Uint32, Uint64, Uchar, Ushort, Uint, Ulong, ULongLong, Ptrdiff, Uintptr, SizeT, ID, Pid} {
		s.Insert(t.Name, t)
	}
	s.Insert("string", &String{Bytes: strsize})
	s.Insert("stack", Stack)
	s.Insert("_symaddr", Symaddr)
	s.Insert("_usymaddr", Usymaddr)
	return s
}

// FallbackScope returns kernel typedefs used by builtins, for when no
// kernel types are available.
func FallbackScope() *Scope {
	s := NewScope("vmlinux")
	for _, t := range []*Typedef{Uid, Gid, Dev} {
		s.Insert(t.Name, t)
	}
	return s
}
