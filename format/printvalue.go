package format

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// PrintValue writes print()'s output for a value that is not a pointer
// (print(1 + 2), print(*p), print(s)) in illumos's layout, that of mdb's
// ::print -tn: the type, then the value; a struct or union opens with
// "{" and shows every member on a line of its own, indented four spaces
// a level, as "type name = value"; integers are hex ("0" for zero),
// chars quoted, enums by name, arrays "[ a, b ]" and char arrays that
// hold a string as one. Anonymous members show as "struct  {" with their
// members inside. Output after a struct or union ends at its closing
// brace, after a scalar with a newline, as illumos's does.
func (p *Printer) PrintValue(w io.Writer, t *TypeInfo, data []byte) error {
	v := &valuePrinter{data: data}
	v.visit("", t, 0, 0)
	v.closeTo(0)
	_, err := io.WriteString(w, v.b.String())
	return err
}

// valuePrinter walks a type as ctf_type_visit does: the type, then its
// members depth first. depth is the member depth of the last line, nest
// the indentation that enclosing arrays add.
type valuePrinter struct {
	b           strings.Builder
	data        []byte
	depth, nest int
}

func (v *valuePrinter) visit(name string, t *TypeInfo, off, depth int) {
	v.member(name, t, off, depth)
	if isStructLike(t) {
		for _, m := range t.Members {
			v.visit(m.Name, m.Type, off+m.Offset, depth+1)
		}
	}
}

func isStructLike(t *TypeInfo) bool {
	return t != nil && (t.Kind == TypeStruct || t.Kind == TypeUnion)
}

// closeTo closes the structs and unions deeper than depth; the last
// brace has no newline.
func (v *valuePrinter) closeTo(depth int) {
	for d := v.depth; d > depth; d-- {
		v.indent(d + v.nest - 1)
		v.b.WriteByte('}')
		if d != depth+1 {
			v.b.WriteByte('\n')
		}
	}
}

func (v *valuePrinter) indent(level int) {
	for i := 0; i < level*4; i++ {
		v.b.WriteByte(' ')
	}
}

// typeName is the type as illumos names it: an anonymous struct or
// union is "struct " or "union ", with the space.
func typeName(t *TypeInfo) string {
	switch t.Name {
	case "struct", "union":
		return t.Name + " "
	}
	return t.Name
}

// member prints one node of the walk (dt_print_member).
func (v *valuePrinter) member(name string, t *TypeInfo, off, depth int) {
	v.closeTo(depth)
	if depth < v.depth {
		v.b.WriteByte('\n')
	}
	v.depth = depth
	arrayMember := v.nest != 0 && depth == 0
	// Array elements that are not structs are printed inline.
	brief := arrayMember && !isStructLike(t)
	if !brief {
		if arrayMember {
			v.b.WriteByte('\n')
		}
		v.indent(depth + v.nest)
		tn := typeName(t)
		v.b.WriteString(tn)
		if name != "" {
			if !strings.HasSuffix(tn, "*") && !strings.HasSuffix(tn, " ") {
				v.b.WriteByte(' ')
			}
			v.b.WriteString(name)
			if t.Kind == TypeInt {
				bits := intBits(t)
				if size := bits / 8; bits%8 != 0 || off%8 != 0 || size > 8 || size != t.Size {
					fmt.Fprintf(&v.b, " :%d", bits)
				}
			}
			v.b.WriteString(" =")
		}
		v.b.WriteByte(' ')
	}
	v.value(t, off)
	if !brief {
		v.b.WriteByte('\n')
	}
}

// intBits is an integer's width: a bit-field's, or its type's.
func intBits(t *TypeInfo) int {
	if t.Bits != 0 {
		return t.Bits
	}
	return t.Size * 8
}

// at returns n bytes of the value at byte offset off, zeros past the
// recorded data.
func (v *valuePrinter) at(off, n int) []byte {
	b := make([]byte, n)
	if off >= 0 && off < len(v.data) {
		copy(b, v.data[off:])
	}
	return b
}

// uint reads a little-endian unsigned integer of size bytes (1 to 8).
func (v *valuePrinter) uint(off, size int) uint64 {
	var buf [8]byte
	copy(buf[:], v.at(off, size))
	return binary.LittleEndian.Uint64(buf[:])
}

// hex prints an integer of size bytes as C's %#x does: "0" for zero.
func (v *valuePrinter) hex(off, size int) {
	switch size {
	case 1, 2, 4, 8:
	default:
		fmt.Fprintf(&v.b, "<invalid size %d>", size)
		return
	}
	if x := v.uint(off, size); x == 0 {
		v.b.WriteByte('0')
	} else {
		fmt.Fprintf(&v.b, "%#x", x)
	}
}

// value prints the value of type t at bit offset off.
func (v *valuePrinter) value(t *TypeInfo, off int) {
	addr := off / 8
	switch t.Kind {
	case TypeInt:
		bits := intBits(t)
		size := bits / 8
		switch {
		case size > 8 || bits%8 != 0 || size&(size-1) != 0:
			// A bit-field: illumos reads the bytes it spans from its
			// first byte and shifts out the bits below it.
			mask := uint64(1)<<uint(bits) - 1
			if bits >= 64 {
				mask = ^uint64(0)
			}
			x := v.uint(addr, min((bits+7)/8, 8)) >> uint(off%8) & mask
			if x == 0 {
				v.b.WriteByte('0')
			} else {
				fmt.Fprintf(&v.b, "%#x", x)
			}
		case t.Char && t.Signed && bits == 8:
			c := int8(v.uint(addr, 1))
			switch {
			case c >= 0x20 && c < 0x7f:
				fmt.Fprintf(&v.b, "'%c'", c)
			case c == 0:
				v.b.WriteString(`'\0'`)
			default:
				// C's %03o of the char promoted to int.
				fmt.Fprintf(&v.b, `'\%03o'`, uint32(int32(c)))
			}
		default:
			v.hex(addr, size)
		}
	case TypePointer:
		v.hex(addr, t.Size)
	case TypeStruct, TypeUnion:
		v.b.WriteByte('{')
	case TypeEnum:
		var x int64
		switch t.Size {
		case 1:
			x = int64(uint8(v.uint(addr, 1)))
		case 2:
			x = int64(uint16(v.uint(addr, 2)))
		case 4:
			x = int64(int32(v.uint(addr, 4)))
		default:
			fmt.Fprintf(&v.b, "<invalid enum size %d>", t.Size)
			return
		}
		for _, e := range t.Enum {
			if e.Value == x {
				v.b.WriteString(e.Name)
				return
			}
		}
		fmt.Fprintf(&v.b, "%d", x)
	case TypeArray:
		v.array(t, off)
	default:
		v.b.WriteString("<unknown encoding>")
	}
}

// array prints an array (dt_print_array): a char array holding a
// printable string then its NUL as the string, other arrays element by
// element.
func (v *valuePrinter) array(t *TypeInfo, off int) {
	el := t.Elem
	if el == nil {
		return
	}
	addr := off / 8
	isString := false
	if el.Kind == TypeInt && el.Char && el.Signed && el.Size == 1 {
		i := 0
		var c byte
		for ; i < t.Len; i++ {
			c = v.at(addr+i, 1)[0]
			if c < 0x20 || c >= 0x7f {
				break
			}
		}
		isString = i != t.Len && c == 0
	}
	// A string at the top is shown without brackets: print("foo") is
	// `string "foo"`.
	brackets := !isString || v.depth != 0
	if brackets {
		v.b.WriteString("[ ")
	}
	if isString {
		v.b.WriteByte('"')
		for i := 0; i < t.Len; i++ {
			c := v.at(addr+i, 1)[0]
			if c == 0 {
				break
			}
			v.b.WriteByte(c)
		}
		v.b.WriteByte('"')
	} else {
		for i := 0; i < t.Len; i++ {
			sub := &valuePrinter{data: v.data, nest: v.nest + v.depth + 1}
			sub.visit("", el, off+el.Size*8*i, 0)
			sub.closeTo(0)
			v.b.WriteString(sub.b.String())
			if i != t.Len-1 {
				v.b.WriteString(", ")
			} else if isStructLike(el) {
				v.b.WriteByte('\n')
			}
		}
	}
	if brackets {
		if isStructLike(el) {
			v.indent(v.depth + v.nest)
		} else {
			v.b.WriteByte(' ')
		}
		v.b.WriteByte(']')
	}
}
