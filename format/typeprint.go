package format

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// TypeKind is the kind of a resolved (typedef-free) type for print().
type TypeKind int

// Type kinds print() distinguishes.
const (
	TypeOther TypeKind = iota // floats, functions, void: not shown
	TypeInt
	TypeEnum
	TypePointer
	TypeStruct
	TypeUnion
	TypeArray
)

// TypeInfo describes a D type for the print() action. The consumer builds
// it from the checker's types. Name is the type as written, typedef names
// kept ("uint64_t", "struct foo", "char [5]"); an anonymous struct or
// union is named "struct" or "union".
type TypeInfo struct {
	Kind TypeKind
	Name string
	Size int // bytes
	// Signed and Char describe integers (Char: the char encoding).
	Signed bool
	Char   bool
	// Bits is the width of a bit-field member; 0 means Size*8.
	Bits int
	// Enum lists an enum's constants.
	Enum []EnumConst
	// Members lists a struct's or union's members.
	Members []Member
	// Elem and Len describe an array.
	Elem *TypeInfo
	Len  int
}

// EnumConst is one enumerator.
type EnumConst struct {
	Name  string
	Value int64
}

// Member is a struct or union member; Offset is in bits.
type Member struct {
	Name   string
	Offset int
	Type   *TypeInfo
}

const (
	printStartIndent = 44
	printMaxDepth    = 10
)

type printState struct {
	b         *strings.Builder
	data      []byte
	size      int
	kinds     [printMaxDepth]TypeKind
	lastDepth int
}

// PrintType writes the print() action's output for the object at addr
// whose bytes are data: "0xADDR = *", then the value with its type, one
// member a line, zero-valued members left out. printSize is the
// printsize option: data beyond it is shown as "...".
func (p *Printer) PrintType(w io.Writer, addr uint64, t *TypeInfo, data []byte, printSize int) error {
	size := len(data)
	if printSize > 0 && size > printSize {
		size = printSize
	}
	var b strings.Builder
	if addr == 0 {
		b.WriteString("(nil) = *\n")
	} else {
		fmt.Fprintf(&b, "0x%x = *\n", addr)
	}
	st := &printState{b: &b, data: data, size: size}
	st.visitTree("", t, 0, 0)
	st.closeParens(0)
	_, err := io.WriteString(w, b.String())
	return err
}

// visitTree walks t like ctf_type_visit: the type, then its members.
func (st *printState) visitTree(name string, t *TypeInfo, off, depth int) bool {
	if !st.visit(name, t, off, depth) {
		return false
	}
	if t.Kind == TypeStruct || t.Kind == TypeUnion {
		for _, m := range t.Members {
			if !st.visitTree(m.Name, m.Type, off+m.Offset, depth+1) {
				return false
			}
		}
	}
	return true
}

func (st *printState) closeParens(depth int) {
	switch st.kinds[depth] {
	case TypeStruct, TypeUnion:
		if depth == 0 && st.lastDepth == 0 {
			st.lastDepth = 1
		}
		for i := st.lastDepth - depth; i > 0; i-- {
			comma := ""
			if depth > 0 || i > 1 {
				comma = ","
			}
			fmt.Fprintf(st.b, "%*s}%s\n", printStartIndent+depth+i-1, "", comma)
			st.lastDepth = depth
		}
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func (st *printState) bytesAt(off, n int) []byte {
	if off >= len(st.data) {
		return nil
	}
	end := off + n
	if end > len(st.data) {
		end = len(st.data)
	}
	return st.data[off:end]
}

// visit prints one node; false stops the walk (data or depth exhausted).
func (st *printState) visit(name string, t *TypeInfo, off, depth int) bool {
	if off/8 >= st.size || depth >= printMaxDepth {
		fmt.Fprintf(st.b, "%*s...\n", printStartIndent+depth, "")
		return false
	}
	if st.lastDepth > depth {
		st.closeParens(depth)
	}
	data := st.bytesAt(off/8, t.Size)
	if depth > 0 && allZero(data) {
		return true
	}
	st.kinds[depth] = t.Kind
	st.lastDepth = depth
	tname := strings.TrimSuffix(t.Name, " ")
	var text string
	switch t.Kind {
	case TypeStruct, TypeUnion:
		text = "(" + tname + ") {"
	case TypeArray:
		text = "(" + tname + ") ["
		if t.Len == 0 {
			text += "],"
		}
	case TypeInt:
		var buf [8]byte
		copy(buf[:], data)
		raw := binary.LittleEndian.Uint64(buf[:])
		bits := t.Size * 8
		if t.Bits != 0 && t.Bits != bits {
			// A bit-field: Offset counts bits from the containing
			// object's start.
			bd := st.bytesAt(off/8, 8)
			copy(buf[:], make([]byte, 8))
			copy(buf[:], bd)
			raw = binary.LittleEndian.Uint64(buf[:]) >> uint(off%8)
			raw &= 1<<uint(t.Bits) - 1
			if raw == 0 {
				return true
			}
			text = fmt.Sprintf("(%s)%d,", tname, raw)
			break
		}
		var v int64
		switch bits {
		case 8:
			v = int64(uint8(raw))
			if t.Signed {
				v = int64(int8(raw))
			}
		case 16:
			v = int64(uint16(raw))
			if t.Signed {
				v = int64(int16(raw))
			}
		case 32:
			v = int64(uint32(raw))
			if t.Signed {
				v = int64(int32(raw))
			}
		default:
			if !t.Signed {
				text = fmt.Sprintf("(%s)%d,", tname, raw)
			}
			v = int64(raw)
		}
		if text != "" {
			break
		}
		if t.Char && tname == "char" {
			text = fmt.Sprintf("(%s)'%c',", tname, byte(v))
		} else {
			text = fmt.Sprintf("(%s)%d,", tname, v)
		}
	case TypeEnum:
		var buf [4]byte
		copy(buf[:], data)
		v := int64(int32(binary.LittleEndian.Uint32(buf[:])))
		text = fmt.Sprintf("(%s)%d,", tname, v)
		for _, e := range t.Enum {
			if e.Value == v {
				text = fmt.Sprintf("(%s)%s,", tname, e.Name)
				break
			}
		}
	case TypePointer:
		var buf [8]byte
		copy(buf[:], data)
		text = fmt.Sprintf("(%s)0x%x,", tname, binary.LittleEndian.Uint64(buf[:]))
	default:
		return true
	}
	member := ""
	if depth > 0 && name != "" {
		member = "." + name + " = "
	}
	fmt.Fprintf(st.b, "%*s%s%s\n", printStartIndent+depth, "", member, text)
	if t.Kind != TypeArray || t.Elem == nil {
		return true
	}
	if allZero(st.bytesAt(off/8, t.Elem.Size*t.Len)) {
		return true
	}
	ischar := t.Elem.Char && t.Elem.Size == 1
	sub := &printState{b: st.b, data: st.data, size: st.size, kinds: st.kinds, lastDepth: st.lastDepth}
	for i := 0; i < t.Len; i++ {
		eoff := off + t.Elem.Size*8*i
		if ischar {
			if d := st.bytesAt(eoff/8, 1); len(d) == 0 || d[0] == 0 {
				break
			}
		}
		if !sub.visit("", t.Elem, eoff, depth+1) {
			return false
		}
	}
	if t.Len > 0 {
		fmt.Fprintf(st.b, "%*s],\n", printStartIndent+depth, "")
	}
	return true
}
