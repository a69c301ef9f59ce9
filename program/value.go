package program

// Value is one decoded datum handed to the output layer by the consumer:
// a printf argument, a trace() record, an aggregation key or result. The
// values live here, below both the printf package (format) and the
// renderers (output), because both read them and embedders receive them.
// The concrete kinds are Int, Float, String, Bytes, Stack, Sym and
// Verbatim.
type Value interface {
	isValue()
}

// Int is an integer of Size bytes (1, 2, 4 or 8). Bits holds the value's
// bits; only the low Size bytes matter. Signed says whether the D type is
// signed, which decides sign extension and how %d and trace() print it.
type Int struct {
	Bits   uint64
	Size   int
	Signed bool
}

// Float is a floating-point value of Size bytes (4, 8 or 16).
type Float struct {
	V    float64
	Size int
}

// String is a D string, already cut at its terminating NUL.
type String string

// Bytes is by-reference data that is not a D string: a struct, union or
// array, or memory traced with tracemem(). Type names the D type when
// known ("struct foo", "char [16]"); it is informational only.
type Bytes struct {
	Data []byte
	Type string
}

// Stack is a kernel stack (stack()) or a user stack (ustack()). PCs lists
// the frames, innermost first; a zero PC ends the stack early. For user
// stacks PID names the process whose address space the PCs belong to and
// Strs may hold per-frame strings from a ustack helper (usually empty).
type Stack struct {
	PCs  []uint64
	User bool
	PID  int
	Strs []string
}

// SymKind says which symbolic action produced a Sym.
type SymKind int

// The symbolic actions of D: sym()/func(), mod(), usym()/ufunc(),
// umod() and uaddr().
const (
	KernelSym SymKind = iota
	KernelMod
	UserSym
	UserMod
	UserAddr
)

// Sym is an address recorded by sym(), mod(), usym(), umod() or uaddr().
// PID is the process for the user kinds.
type Sym struct {
	Addr uint64
	PID  int
	Kind SymKind
}

// Verbatim is text that any conversion prints unchanged. The aggregate
// package passes quantize histograms to printa formats this way, as
// dtrace ignores the conversion for those.
type Verbatim string

func (Int) isValue()      {}
func (Float) isValue()    {}
func (String) isValue()   {}
func (Bytes) isValue()    {}
func (Stack) isValue()    {}
func (Sym) isValue()      {}
func (Verbatim) isValue() {}

// Int64 returns the value sign-extended (Signed) or zero-extended from
// Size bytes.
func (i Int) Int64() int64 {
	switch i.Size {
	case 1:
		if i.Signed {
			return int64(int8(i.Bits))
		}
		return int64(uint8(i.Bits))
	case 2:
		if i.Signed {
			return int64(int16(i.Bits))
		}
		return int64(uint16(i.Bits))
	case 4:
		if i.Signed {
			return int64(int32(i.Bits))
		}
		return int64(uint32(i.Bits))
	}
	return int64(i.Bits)
}

// Uint64 returns the low Size bytes of the value, zero-extended.
func (i Int) Uint64() uint64 {
	switch i.Size {
	case 1:
		return uint64(uint8(i.Bits))
	case 2:
		return uint64(uint16(i.Bits))
	case 4:
		return uint64(uint32(i.Bits))
	}
	return i.Bits
}

// I64 makes a signed 8-byte Int.
func I64(v int64) Int { return Int{Bits: uint64(v), Size: 8, Signed: true} }

// U64 makes an unsigned 8-byte Int.
func U64(v uint64) Int { return Int{Bits: v, Size: 8} }

// I32 makes a signed 4-byte Int (D's int).
func I32(v int32) Int { return Int{Bits: uint64(int64(v)), Size: 4, Signed: true} }
