package program

// TypeKind classifies a Type.
type TypeKind int

// Type kinds. Enums are Int; typedefs are resolved away.
const (
	TVoid TypeKind = iota
	TInt
	TPointer
	TString
	TArray
	TStruct // also unions: members may overlap
	TFunc
)

// Type is the layout-level description of a D type: what code generation
// lays out and what the consumer prints (print(), typed record items).
type Type struct {
	Kind   TypeKind
	Size   uint32 // bytes; for TString the string size (strsize)
	Signed bool   // TInt only
	Elem   *Type  // TPointer, TArray
	Len    uint32 // TArray
	// Fields are the members of a TStruct, by name.
	Fields []Field
	// Name is the type as written, typedef names kept ("uint64_t",
	// "struct foo", "char [5]"); diagnostics and print() show it.
	Name string
	// Union marks a TStruct that is a union; Char an integer of a
	// character type; Float a floating-point type (carried as TInt);
	// Enum lists an enum's constants (an enum is a TInt).
	Union bool
	Char  bool
	Float bool
	Enum  []EnumConst
	// User marks pointers to user-space memory (loads use
	// bpf_probe_read_user).
	User bool
	// Stack, KeyWidth and Sym describe an aggregation key item's
	// layout beyond its type; the code generator sets them and the
	// item's Record.Kind tells the consumer the same. Stack marks a
	// stack() (1) or ustack() (2) of Len frames (Size includes ustack's
	// tgid word). KeyWidth, for a string item, is its narrowed width in
	// bytes with the NUL (0: strsize+1). Sym marks the address of a
	// symbol subroutine (KindSym ... KindUAddr).
	Stack    int
	KeyWidth uint32
	Sym      ValueKind
}

// EnumConst is one enumerator of an enum type.
type EnumConst struct {
	Name  string
	Value int64
}

// Field is one member of a struct or union.
type Field struct {
	Name    string
	Offset  uint32 // byte offset
	Type    *Type
	BitOff  uint32 // bit offset within the storage unit at Offset
	BitSize uint32 // 0: not a bit-field
}

// Common integer types.
var (
	TypeChar   = &Type{Kind: TInt, Size: 1, Signed: true, Name: "char"}
	TypeUChar  = &Type{Kind: TInt, Size: 1, Name: "uchar_t"}
	TypeShort  = &Type{Kind: TInt, Size: 2, Signed: true, Name: "short"}
	TypeUShort = &Type{Kind: TInt, Size: 2, Name: "ushort_t"}
	TypeInt    = &Type{Kind: TInt, Size: 4, Signed: true, Name: "int"}
	TypeUInt   = &Type{Kind: TInt, Size: 4, Name: "uint_t"}
	TypeLong   = &Type{Kind: TInt, Size: 8, Signed: true, Name: "long"}
	TypeULong  = &Type{Kind: TInt, Size: 8, Name: "ulong_t"}
	TypeVoid   = &Type{Kind: TVoid, Name: "void"}
)

// IsInt reports whether t is an integer (or enum) type.
func (t *Type) IsInt() bool { return t != nil && t.Kind == TInt }

// IsScalar reports whether values of t fit in a register.
func (t *Type) IsScalar() bool {
	return t != nil && (t.Kind == TInt || t.Kind == TPointer)
}

// IsString reports whether t is D's string type.
func (t *Type) IsString() bool { return t != nil && t.Kind == TString }
