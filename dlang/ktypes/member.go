package ktypes

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// MemberOffset finds the byte offset of member in the struct named
// structName in raw BTF (the contents of /sys/kernel/btf/vmlinux).
//
// It walks the type section once and decodes nothing but that struct,
// so it takes a few milliseconds where decoding the kernel's BTF with
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
	types := raw[hdrLen+typeOff : end]
	strs := raw[hdrLen+strOff : sEnd]
	name := func(off uint32) []byte {
		if uint64(off) >= uint64(len(strs)) {
			return nil
		}
		s := strs[off:]
		if i := bytes.IndexByte(s, 0); i >= 0 {
			return s[:i]
		}
		return s
	}
	want, wantMember := []byte(structName), []byte(member)
	for p := 0; p+12 <= len(types); {
		nameOff, info := le.Uint32(types[p:]), le.Uint32(types[p+4:])
		kind, vlen := (info>>24)&0x1f, int(info&0xffff)
		kindFlag := info>>31 != 0
		p += 12
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
		if p+extra > len(types) {
			return 0, errors.New("btf: truncated type")
		}
		if kind == kindStruct && bytes.Equal(name(nameOff), want) {
			for i := 0; i < vlen; i++ {
				m := types[p+12*i:]
				if !bytes.Equal(name(le.Uint32(m)), wantMember) {
					continue
				}
				bits := le.Uint32(m[8:])
				if kindFlag {
					if bits>>24 != 0 {
						return 0, fmt.Errorf("btf: %s.%s is a bit-field", structName, member)
					}
					bits &= 0xffffff
				}
				if bits%8 != 0 {
					return 0, fmt.Errorf("btf: %s.%s is not byte-aligned", structName, member)
				}
				return bits / 8, nil
			}
			return 0, fmt.Errorf("btf: struct %s has no member %s", structName, member)
		}
		p += extra
	}
	return 0, fmt.Errorf("btf: no struct %s", structName)
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
