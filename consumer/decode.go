package consumer

import (
	"bytes"
	"encoding/binary"
	"unsafe"

	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/program"
)

var le = binary.LittleEndian

// value decodes one record item (or aggregation key item) as its kind
// says.
func value(data []byte, r program.Record) program.Value {
	return (*boxes)(nil).value(data, r)
}

// boxes hands out the format.Values of integers and strings without an
// allocation each: a value is an element of a slab (strings' bytes are
// in an arena) that is never written again once handed out, so a
// renderer may keep it; a new slab is allocated when one is used up,
// and the old one lives as long as a value in it does. The nil *boxes
// boxes as Go does.
type boxes struct {
	ints  []program.Int
	strs  []program.String
	arena []byte
}

const (
	boxSlab   = 256
	arenaSize = 16 << 10
)

// The interface type words of an Int and a String in a program.Value.
var (
	intType = typeWord(program.Int{})
	strType = typeWord(program.String(""))
)

// iface is the layout of a non-empty interface value.
type iface struct{ tab, data unsafe.Pointer }

func typeWord(v program.Value) unsafe.Pointer { return (*iface)(unsafe.Pointer(&v)).tab }

func (b *boxes) int(v program.Int) program.Value {
	if b == nil {
		return v
	}
	return box(&b.ints, intType, v)
}

// box stores v in the next slot of *slab (a new slab of boxSlab when it
// is used up) and returns it as a program.Value whose type word is typ,
// without the allocation of converting v to an interface.
func box[T any](slab *[]T, typ unsafe.Pointer, v T) program.Value {
	if len(*slab) == 0 {
		*slab = make([]T, boxSlab)
	}
	p := &(*slab)[0]
	*slab = (*slab)[1:]
	*p = v
	var out program.Value
	*(*iface)(unsafe.Pointer(&out)) = iface{typ, unsafe.Pointer(p)}
	return out
}

func (b *boxes) string(buf []byte) program.Value {
	if b == nil || len(buf) > arenaSize/4 {
		return program.String(buf)
	}
	if len(b.arena) < len(buf) {
		b.arena = make([]byte, arenaSize)
	}
	n := copy(b.arena, buf)
	str := unsafe.String(unsafe.SliceData(b.arena), n)
	b.arena = b.arena[n:]
	return box(&b.strs, strType, program.String(str))
}

func (b *boxes) value(data []byte, r program.Record) program.Value {
	buf := data[r.Offset : r.Offset+r.Size]
	switch r.Kind {
	case program.KindSigned, program.KindUnsigned:
		var v uint64
		switch r.Size {
		case 1:
			v = uint64(buf[0])
		case 2:
			v = uint64(le.Uint16(buf))
		case 4:
			v = uint64(le.Uint32(buf))
		default:
			v = le.Uint64(buf)
		}
		return b.int(program.Int{Bits: v, Size: int(r.Size), Signed: r.Kind == program.KindSigned})
	case program.KindString:
		if i := bytes.IndexByte(buf, 0); i >= 0 {
			buf = buf[:i]
		}
		return b.string(buf)
	case program.KindStack, program.KindUStack:
		var st program.Stack
		if r.Kind == program.KindUStack && len(buf) >= 8 {
			st.User, st.PID = true, int(le.Uint64(buf))
			buf = buf[8:]
		}
		for i := 0; i+8 <= len(buf); i += 8 {
			pc := le.Uint64(buf[i:])
			if pc == 0 {
				break
			}
			st.PCs = append(st.PCs, pc)
		}
		return st
	case program.KindSym, program.KindMod:
		kind := program.KernelSym
		if r.Kind == program.KindMod {
			kind = program.KernelMod
		}
		return program.Sym{Addr: le.Uint64(buf), Kind: kind}
	case program.KindUSym, program.KindUMod, program.KindUAddr:
		// The tgid of the process the address belongs to, then the
		// address.
		kind := program.UserSym
		switch r.Kind {
		case program.KindUMod:
			kind = program.UserMod
		case program.KindUAddr:
			kind = program.UserAddr
		}
		return program.Sym{PID: int(le.Uint64(buf)), Addr: le.Uint64(buf[8:]), Kind: kind}
	}
	return program.Bytes{Data: bytes.Clone(buf)}
}

// u64 reads a little-endian u64 at off, 0 beyond the data.
func u64(data []byte, off uint32) uint64 {
	if int(off)+8 > len(data) {
		return 0
	}
	return le.Uint64(data[off:])
}

// dataRecording reports whether a record prints anything (a clause with
// only commit/discard does not print the probe line).
func dataRecording(recs []program.Record) bool {
	if len(recs) == 0 {
		return true
	}
	for _, r := range recs {
		switch r.Action {
		case program.ActCommit, program.ActDiscard, program.ActArg:
		default:
			return true
		}
	}
	return false
}

// printTypeInfo describes a D type for format.PrintType: the walk sees
// members, offsets, bit-fields, enums and array elements. bits is the
// width of a bit-field member of type t (0: none). Pointers are leaves,
// so the walk ends: an object cannot contain itself.
func printTypeInfo(t *program.Type, bits uint32) *format.TypeInfo {
	ti := &format.TypeInfo{Name: t.Name, Size: int(t.Size), Bits: int(bits)}
	switch t.Kind {
	case program.TInt:
		switch {
		case t.Float:
			ti.Kind = format.TypeOther
		case t.Enum != nil:
			ti.Kind = format.TypeEnum
			for _, e := range t.Enum {
				ti.Enum = append(ti.Enum, format.EnumConst{Name: e.Name, Value: e.Value})
			}
		default:
			ti.Kind, ti.Signed, ti.Char = format.TypeInt, t.Signed, t.Char
		}
	case program.TPointer:
		ti.Kind = format.TypePointer
	case program.TStruct:
		ti.Kind = format.TypeStruct
		if t.Union {
			ti.Kind = format.TypeUnion
		}
		for _, f := range t.Fields {
			ti.Members = append(ti.Members, format.Member{
				Name:   f.Name,
				Offset: int(f.Offset*8 + f.BitOff),
				Type:   printTypeInfo(f.Type, f.BitSize),
			})
		}
	case program.TArray:
		ti.Kind, ti.Len = format.TypeArray, int(t.Len)
		if t.Elem != nil {
			ti.Elem = printTypeInfo(t.Elem, 0)
		}
	case program.TString:
		// D's string is a char array of strsize, as illumos prints it.
		ti.Kind, ti.Len = format.TypeArray, int(t.Size)
		ti.Elem = &format.TypeInfo{Kind: format.TypeInt, Name: "char", Size: 1, Signed: true, Char: true}
	default:
		ti.Kind = format.TypeOther
	}
	return ti
}
