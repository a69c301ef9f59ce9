package ktypes

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// MemberOffset finds the byte offset of member in the struct named
// structName in raw BTF (the contents of /sys/kernel/btf/vmlinux).
//
// It walks the type section once and decodes nothing but that struct
// (and the anonymous structs and unions in it, whose members it also
// finds, as C does: dentry.d_name sits in an unnamed union on 6.18), so
// it takes a few milliseconds where decoding the kernel's BTF with
// cilium/ebpf (as Types does for D's type names) takes tens. Code
// generation asks it for single offsets (task_struct.comm for execname
// keys) in programs that otherwise need no kernel type at all. Only
// little-endian BTF and plain (non-bit-field) members are handled.
func MemberOffset(raw []byte, structName, member string) (uint32, error) {
	le := binary.LittleEndian
	if len(raw) < 24 || le.Uint16(raw) != 0xeb9f {
		return 0, errors.New("btf: not little-endian BTF")
	}
	hdrLen := le.Uint32(raw[4:])
	typeOff, typeLen := le.Uint32(raw[8:]), le.Uint32(raw[12:])
	strOff, strLen := le.Uint32(raw[16:]), le.Uint32(raw[20:])
	end := uint64(hdrLen) + uint64(typeOff) + uint64(typeLen)
	sEnd := uint64(hdrLen) + uint64(strOff) + uint64(strLen)
	if end > uint64(len(raw)) || sEnd > uint64(len(raw)) {
		return 0, errors.New("btf: truncated")
	}
	b := &rawBTF{types: raw[hdrLen+typeOff : end], strs: raw[hdrLen+strOff : sEnd]}
	want := []byte(structName)
	found := -1
	for p := 0; p+12 <= len(b.types); {
		nameOff, info := le.Uint32(b.types[p:]), le.Uint32(b.types[p+4:])
		kind, vlen := (info>>24)&0x1f, int(info&0xffff)
		var extra int
		switch kind {
		case kindInt, kindVar, kindDeclTag:
			extra = 4
		case kindArray:
			extra = 12
		case kindStruct, kindUnion, kindDatasec, kindEnum64:
			extra = 12 * vlen
		case kindEnum, kindFuncProto:
			extra = 8 * vlen
		case kindPtr, kindFwd, kindTypedef, kindVolatile, kindConst, kindRestrict, kindFunc, kindFloat, kindTypeTag:
		default:
			return 0, fmt.Errorf("btf: unknown kind %d", kind)
		}
		if p+12+extra > len(b.types) {
			return 0, errors.New("btf: truncated type")
		}
		b.offs = append(b.offs, p)
		if found < 0 && kind == kindStruct && bytes.Equal(b.name(nameOff), want) {
			found = p
		}
		p += 12 + extra
	}
	if found < 0 {
		return 0, fmt.Errorf("btf: no struct %s", structName)
	}
	// A dotted member ("context.vdso") walks into named struct members.
	var total uint32
	p := found
	for i, part := range strings.Split(member, ".") {
		if i > 0 {
			if p < 0 {
				return 0, fmt.Errorf("btf: %s.%s: not a struct", structName, member)
			}
			if k := (le.Uint32(b.types[p+4:]) >> 24) & 0x1f; k != kindStruct && k != kindUnion {
				return 0, fmt.Errorf("btf: %s.%s: not a struct", structName, member)
			}
		}
		off, typ, ok, err := b.member(p, []byte(part), 0)
		if err != nil {
			return 0, fmt.Errorf("btf: %s.%s %w", structName, member, err)
		}
		if !ok {
			return 0, fmt.Errorf("btf: struct %s has no member %s", structName, member)
		}
		total += off
		p = typ
	}
	return total, nil
}

// rawBTF is the type and string sections of raw BTF, with where each
// type's record starts (type id i at offs[i-1]).
type rawBTF struct {
	types, strs []byte
	offs        []int
}

func (b *rawBTF) name(off uint32) []byte {
	if uint64(off) >= uint64(len(b.strs)) {
		return nil
	}
	s := b.strs[off:]
	if i := bytes.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// member finds the member named want of the struct or union whose
// record starts at p, looking into its unnamed struct and union members
// (at most depth 8 deep); it reports the byte offset and where the
// member's type record starts (through typedefs; -1 if unknown).
func (b *rawBTF) member(p int, want []byte, depth int) (uint32, int, bool, error) {
	le := binary.LittleEndian
	info := le.Uint32(b.types[p+4:])
	vlen, kindFlag := int(info&0xffff), info>>31 != 0
	for i := 0; i < vlen; i++ {
		m := b.types[p+12+12*i:]
		name := b.name(le.Uint32(m))
		if len(name) > 0 && !bytes.Equal(name, want) {
			continue
		}
		bits := le.Uint32(m[8:])
		if kindFlag {
			if bits>>24 != 0 {
				if len(name) == 0 {
					continue
				}
				return 0, -1, false, errors.New("is a bit-field")
			}
			bits &= 0xffffff
		}
		if len(name) > 0 {
			if bits%8 != 0 {
				return 0, -1, false, errors.New("is not byte-aligned")
			}
			return bits / 8, b.resolve(le.Uint32(m[4:])), true, nil
		}
		// An unnamed member: look into it if it is a struct or union.
		q := b.resolve(le.Uint32(m[4:]))
		if q < 0 || depth >= 8 || bits%8 != 0 {
			continue
		}
		if k := (le.Uint32(b.types[q+4:]) >> 24) & 0x1f; k != kindStruct && k != kindUnion {
			continue
		}
		off, typ, ok, err := b.member(q, want, depth+1)
		if err != nil || ok {
			return bits/8 + off, typ, ok, err
		}
	}
	return 0, -1, false, nil
}

// resolve returns where the record of type id starts, through
// typedefs and qualifiers, or -1.
func (b *rawBTF) resolve(id uint32) int {
	le := binary.LittleEndian
	for range 16 {
		if id == 0 || uint64(id) > uint64(len(b.offs)) {
			return -1
		}
		p := b.offs[id-1]
		switch (le.Uint32(b.types[p+4:]) >> 24) & 0x1f {
		case kindTypedef, kindVolatile, kindConst, kindRestrict, kindTypeTag:
			id = le.Uint32(b.types[p+8:])
		default:
			return p
		}
	}
	return -1
}

// BTF kinds (linux/btf.h).
const (
	kindInt = iota + 1
	kindPtr
	kindArray
	kindStruct
	kindUnion
	kindEnum
	kindFwd
	kindTypedef
	kindVolatile
	kindConst
	kindRestrict
	kindFunc
	kindFuncProto
	kindVar
	kindDatasec
	kindFloat
	kindDeclTag
	kindTypeTag
	kindEnum64
)
