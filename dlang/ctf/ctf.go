// Package ctf writes D's type containers in the Compact C Type Format
// that binutils' libctf reads (format version 3, numbered 4 in its
// header), for dtrace's -x ctypes and -x dtypes options: one dictionary
// of the named types of a container and every type they refer to.
//
// D's own types are written as illumos' libdtrace makes them: string is a
// typedef of char[strsize]; stack, _symaddr and _usymaddr are typedefs of
// void. A struct, union or enum of another container (the kernel's, from
// BTF) is written as a forward declaration, so that a D type that points
// into the kernel does not bring the kernel's whole type graph with it.
package ctf

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/dtrace-go/dtrace/dlang/types"
)

// The format's constants (binutils' include/ctf.h).
const (
	magic   = 0xdff2
	version = 4 // CTF_VERSION_3

	kindInteger  = 1
	kindFloat    = 2
	kindPointer  = 3
	kindArray    = 4
	kindFunction = 5
	kindStruct   = 6
	kindUnion    = 7
	kindEnum     = 8
	kindForward  = 9
	kindTypedef  = 10
	kindVolatile = 11
	kindConst    = 12
	kindRestrict = 13

	intSigned = 0x01
	intChar   = 0x02
	intBool   = 0x04

	fpSingle  = 1
	fpDouble  = 2
	fpLDouble = 6

	maxSize     = 0xfffffffe // larger sizes take the long form
	lsizeSent   = 0xffffffff
	lstructBits = 536870912 // member offsets from here on take the long form
	headerSize  = 4 + 12*4
)

// Named is a type under its name in a container.
type Named struct {
	Name string
	Type types.Type
}

// Write writes one dictionary holding the named types (a typedef's name
// is its own; a struct's is its tag) and every type they refer to.
func Write(w io.Writer, named []Named) error {
	e := &encoder{ids: map[types.Type]uint32{}, strs: map[string]uint32{}}
	e.strtab = append(e.strtab, 0)
	for _, n := range named {
		if _, err := e.id(n.Type); err != nil {
			return fmt.Errorf("%s: %v", n.Name, err)
		}
	}
	var hdr [headerSize]byte
	le := binary.LittleEndian
	le.PutUint16(hdr[0:], magic)
	hdr[2] = version
	// parlabel, parname, cuname and the offsets of the label, object,
	// function, object index, function index, variable and type
	// sections are 0 (all empty but types, which come first); then
	// the string section's offset and length.
	le.PutUint32(hdr[headerSize-8:], uint32(len(e.types)))
	le.PutUint32(hdr[headerSize-4:], uint32(len(e.strtab)))
	for _, b := range [][]byte{hdr[:], e.types, e.strtab} {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// encoder lays out the type section: each type gets the next id (from 1)
// when it is first met, and is written after the types it refers to have
// ids (a struct's members may refer back to it).
type encoder struct {
	ids    map[types.Type]uint32
	next   uint32
	types  []byte
	strtab []byte
	strs   map[string]uint32
	void   uint32
}

func (e *encoder) str(s string) uint32 {
	if s == "" {
		return 0
	}
	if off, ok := e.strs[s]; ok {
		return off
	}
	off := uint32(len(e.strtab))
	e.strtab = append(append(e.strtab, s...), 0)
	e.strs[s] = off
	return off
}

func (e *encoder) u32(vs ...uint32) {
	for _, v := range vs {
		e.types = binary.LittleEndian.AppendUint32(e.types, v)
	}
}

func info(kind int, root bool, vlen int) uint32 {
	r := uint32(0)
	if root {
		r = 1
	}
	return uint32(kind)<<26 | r<<25 | uint32(vlen)&0xffffff
}

// reserve gives t an id before its definition is written.
func (e *encoder) reserve(t types.Type) uint32 {
	e.next++
	if t != nil {
		e.ids[t] = e.next
	}
	return e.next
}

// voidID is the id of void (an integer of no bits, as compilers write it).
func (e *encoder) voidID() uint32 {
	if e.void == 0 {
		e.void = e.reserve(types.Void)
		e.u32(e.str("void"), info(kindInteger, true, 0), 0, 0)
	}
	return e.void
}

// ref writes a type that is a kind and a reference to another.
func (e *encoder) ref(t types.Type, kind int, name string, to types.Type) (uint32, error) {
	target, err := e.id(to)
	if err != nil {
		return 0, err
	}
	id := e.reserve(t)
	e.u32(e.str(name), info(kind, name != "", 0), target)
	return id, nil
}

// id returns t's id, writing t (and what it refers to) if it is new.
func (e *encoder) id(t types.Type) (uint32, error) {
	if t == nil {
		return e.voidID(), nil
	}
	if id, ok := e.ids[t]; ok {
		return id, nil
	}
	switch t := t.(type) {
	case *types.Basic:
		return e.basic(t), nil
	case *types.Pointer:
		return e.ref(t, kindPointer, "", t.Elem)
	case *types.Typedef:
		return e.ref(t, kindTypedef, t.Name, t.Type)
	case *types.Qualified:
		return e.qualified(t)
	case *types.Array:
		return e.array(t, t.Elem, t.Len)
	case *types.String:
		arr, err := e.array(nil, types.Char, t.Bytes)
		if err != nil {
			return 0, err
		}
		id := e.reserve(t)
		e.u32(e.str("string"), info(kindTypedef, true, 0), arr)
		return id, nil
	case *types.Special:
		void := e.voidID()
		id := e.reserve(t)
		e.u32(e.str(t.Name), info(kindTypedef, true, 0), void)
		return id, nil
	case *types.Struct:
		return e.record(t)
	case *types.Enum:
		return e.enum(t), nil
	case *types.Func:
		return e.function(t)
	}
	return 0, fmt.Errorf("no CTF for %s", types.TypeString(t))
}

func (e *encoder) basic(b *types.Basic) uint32 {
	switch b.K {
	case types.KindVoid:
		return e.voidID()
	case types.KindFloat:
		enc := uint32(fpDouble)
		switch {
		case b.Bytes == 4:
			enc = fpSingle
		case b.Bytes > 8:
			enc = fpLDouble
		}
		id := e.reserve(b)
		e.u32(e.str(b.Name), info(kindFloat, true, 0), uint32(b.Bytes), enc<<24|uint32(b.Bytes*8))
		return id
	}
	var enc uint32
	if b.Signed {
		enc |= intSigned
	}
	if b.Char {
		enc |= intChar
	}
	if b.Name == "_Bool" {
		enc |= intBool
	}
	bits := uint32(b.Bytes * 8)
	if b.Bits > 0 {
		bits = uint32(b.Bits)
	}
	id := e.reserve(b)
	// A bit-field's type is not the type by that name.
	e.u32(e.str(b.Name), info(kindInteger, b.Bits == 0, 0), uint32(b.Bytes), enc<<24|bits)
	return id
}

func (e *encoder) qualified(q *types.Qualified) (uint32, error) {
	// One type a qualifier, innermost first: const volatile T is
	// const (volatile T); the outermost is q's own id.
	var kinds []int
	for _, k := range []struct {
		bit  types.Qual
		kind int
	}{{types.Restrict, kindRestrict}, {types.Volatile, kindVolatile}, {types.Const, kindConst}} {
		if q.Quals&k.bit != 0 {
			kinds = append(kinds, k.kind)
		}
	}
	target, err := e.id(q.Type)
	if err != nil {
		return 0, err
	}
	for i, k := range kinds {
		var t types.Type
		if i == len(kinds)-1 {
			t = q
		}
		id := e.reserve(t)
		e.u32(0, info(k, false, 0), target)
		target = id
	}
	return target, nil
}

func (e *encoder) array(t types.Type, elem types.Type, n int64) (uint32, error) {
	contents, err := e.id(elem)
	if err != nil {
		return 0, err
	}
	index, err := e.id(types.Long)
	if err != nil {
		return 0, err
	}
	id := e.reserve(t)
	e.u32(0, info(kindArray, false, 0), 0, contents, index, uint32(n))
	return id, nil
}

// size writes a struct's or union's size, in the long form if it must.
func (e *encoder) size(n int64) {
	if n < maxSize {
		e.u32(uint32(n))
		return
	}
	e.u32(lsizeSent, uint32(uint64(n)>>32), uint32(n))
}

func (e *encoder) record(s *types.Struct) (uint32, error) {
	kind := kindStruct
	if s.Union {
		kind = kindUnion
	}
	if s.Module != "C" && s.Module != "D" && s.Module != "" || !s.Complete || s.Forward {
		// Another container's, or never defined: a forward.
		id := e.reserve(s)
		e.u32(e.str(s.Tag), info(kindForward, s.Tag != "", 0), uint32(kind))
		return id, nil
	}
	// The members' types first, so that the struct's record is whole;
	// a member that refers back to the struct finds its reserved id.
	id := e.reserve(s)
	members := make([]uint32, len(s.Fields))
	pending := e.types
	e.types = nil
	for i, f := range s.Fields {
		m, err := e.id(f.Type)
		if err != nil {
			return 0, err
		}
		members[i] = m
	}
	after := e.types
	e.types = pending
	// Ids are positions in the type section: the struct's record must
	// come before its members' new types, which were given later ids.
	e.u32(e.str(s.Tag), info(kind, s.Tag != "", len(s.Fields)))
	e.size(s.Bytes)
	long := s.Bytes*8 >= lstructBits
	for i, f := range s.Fields {
		if long {
			e.u32(e.str(f.Name), uint32(uint64(f.Offset)>>32), members[i], uint32(f.Offset))
		} else {
			e.u32(e.str(f.Name), uint32(f.Offset), members[i])
		}
	}
	e.types = append(e.types, after...)
	return id, nil
}

func (e *encoder) enum(t *types.Enum) uint32 {
	id := e.reserve(t)
	if t.Module != "C" && t.Module != "D" && t.Module != "" || !t.Complete {
		e.u32(e.str(t.Tag), info(kindForward, t.Tag != "", 0), kindEnum)
		return id
	}
	e.u32(e.str(t.Tag), info(kindEnum, t.Tag != "", len(t.Values)), uint32(t.Size()))
	for _, v := range t.Values {
		e.u32(e.str(v.Name), uint32(int32(v.Value)))
	}
	return id
}

func (e *encoder) function(f *types.Func) (uint32, error) {
	ret, err := e.id(f.Result)
	if err != nil {
		return 0, err
	}
	args := make([]uint32, 0, len(f.Params)+1)
	for _, p := range f.Params {
		a, err := e.id(p)
		if err != nil {
			return 0, err
		}
		args = append(args, a)
	}
	if f.Variadic {
		args = append(args, 0) // a trailing 0 marks "..."
	}
	id := e.reserve(f)
	e.u32(0, info(kindFunction, false, len(args)), ret)
	e.u32(args...)
	if len(args)%2 == 1 {
		e.u32(0)
	}
	return id, nil
}
