package unwind

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Section says which call-frame section bytes come from: .eh_frame and
// .debug_frame differ in how an entry names its CIE and in the default
// pointer encoding.
type Section int

// The two call-frame sections.
const (
	EHFrame Section = iota
	DebugFrame
)

// CIE is a Common Information Entry: what the FDEs that refer to it share.
type CIE struct {
	Version       uint8
	Augmentation  string
	CodeAlign     uint64
	DataAlign     int64
	RAReg         uint64
	FDEEncoding   uint8 // DW_EH_PE_* of the FDEs' addresses
	Signal        bool  // 'S': the FDEs describe a signal trampoline
	Instructions  []byte
	AddressSize   uint8
	augmentationZ bool // the augmentation starts with 'z' (has a length)

	// init is the state after Instructions, computed by the first
	// FDE's Rows (initErr if they fail).
	init    *state
	initErr error
}

// FDE is a Frame Description Entry: the rules for one range of code.
type FDE struct {
	CIE          *CIE
	Begin, End   uint64 // [Begin, End) in the object's virtual addresses
	Instructions []byte
}

// Limits that keep a hostile section from costing more than a real one.
const (
	maxEntries = 1 << 22 // FDEs in one section
	maxRows    = 1 << 16 // rows of one FDE
	maxStack   = 64      // DW_CFA_remember_state depth
)

// errShort is returned for data that ends inside an entry.
var errShort = errors.New("cfi: truncated entry")

// Parse reads every FDE of a call-frame section whose bytes are data,
// loaded at virtual address addr (pc-relative pointers are relative to
// it). Entries it cannot read end the walk with an error, after the FDEs
// read so far.
func Parse(data []byte, addr uint64, sec Section) ([]FDE, error) {
	cies := map[uint64]*CIE{}
	var fdes []FDE
	for off := uint64(0); off < uint64(len(data)); {
		if len(fdes) >= maxEntries {
			return fdes, errors.New("cfi: too many entries")
		}
		r := reader{b: data, off: off}
		length, ok := r.u32()
		if !ok {
			return fdes, errShort
		}
		if length == 0 {
			if sec == EHFrame {
				break // the terminator
			}
			off += 4
			continue
		}
		long := length == 0xffffffff
		l := uint64(length)
		if long {
			if l, ok = r.u64(); !ok {
				return fdes, errShort
			}
		}
		body := r.off
		end := body + l
		if end < body || end > uint64(len(data)) {
			return fdes, errShort
		}
		r.b = data[:end]
		idPos := r.off
		id, ok := r.id(long)
		if !ok {
			return fdes, errShort
		}
		isCIE := id == 0
		if sec == DebugFrame {
			isCIE = id == 0xffffffff || id == 0xffffffffffffffff
		}
		if isCIE {
			cie, err := parseCIE(&r, sec)
			if err != nil {
				return fdes, fmt.Errorf("cfi: CIE at %#x: %w", off, err)
			}
			cies[off] = cie
		} else {
			cieOff := id
			if sec == EHFrame {
				if id > idPos {
					return fdes, fmt.Errorf("cfi: FDE at %#x points before the section", off)
				}
				cieOff = idPos - id
			}
			cie := cies[cieOff]
			if cie == nil {
				c, err := cieAt(data, cieOff, sec)
				if err != nil {
					return fdes, fmt.Errorf("cfi: FDE at %#x: %w", off, err)
				}
				cie, cies[cieOff] = c, c
			}
			fde, err := parseFDE(&r, cie, addr)
			if err != nil {
				return fdes, fmt.Errorf("cfi: FDE at %#x: %w", off, err)
			}
			if fde.End > fde.Begin {
				fdes = append(fdes, fde)
			}
		}
		off = end
	}
	return fdes, nil
}

// cieAt parses the CIE that starts at off (one that comes after the FDE
// naming it, which .debug_frame allows).
func cieAt(data []byte, off uint64, sec Section) (*CIE, error) {
	r := reader{b: data, off: off}
	length, ok := r.u32()
	if !ok || length == 0 {
		return nil, errors.New("no CIE there")
	}
	long := length == 0xffffffff
	l := uint64(length)
	if long {
		if l, ok = r.u64(); !ok {
			return nil, errShort
		}
	}
	end := r.off + l
	if end < r.off || end > uint64(len(data)) {
		return nil, errShort
	}
	r.b = data[:end]
	id, ok := r.id(long)
	if !ok || (sec == EHFrame && id != 0) || (sec == DebugFrame && id != 0xffffffff && id != 0xffffffffffffffff) {
		return nil, errors.New("no CIE there")
	}
	return parseCIE(&r, sec)
}

func parseCIE(r *reader, sec Section) (*CIE, error) {
	c := &CIE{AddressSize: 8}
	var ok bool
	if c.Version, ok = r.u8(); !ok {
		return nil, errShort
	}
	if c.Version != 1 && c.Version != 3 && c.Version != 4 {
		return nil, fmt.Errorf("version %d", c.Version)
	}
	aug, ok := r.cstring()
	if !ok {
		return nil, errShort
	}
	c.Augmentation = aug
	if c.Version == 4 {
		a, ok1 := r.u8()
		_, ok2 := r.u8() // segment selector size
		if !ok1 || !ok2 {
			return nil, errShort
		}
		if a != 4 && a != 8 {
			return nil, fmt.Errorf("address size %d", a)
		}
		c.AddressSize = a
	}
	if c.CodeAlign, ok = r.uleb(); !ok {
		return nil, errShort
	}
	if c.DataAlign, ok = r.sleb(); !ok {
		return nil, errShort
	}
	if c.Version == 1 {
		v, ok := r.u8()
		if !ok {
			return nil, errShort
		}
		c.RAReg = uint64(v)
	} else if c.RAReg, ok = r.uleb(); !ok {
		return nil, errShort
	}
	c.FDEEncoding = peAbsptr
	if sec == DebugFrame && c.AddressSize == 4 {
		c.FDEEncoding = peUdata4
	}
	if len(aug) > 0 && aug[0] == 'z' {
		c.augmentationZ = true
		n, ok := r.uleb()
		if !ok || n > uint64(len(r.b))-r.off {
			return nil, errShort
		}
		ar := reader{b: r.b[:r.off+n], off: r.off}
		for _, ch := range aug[1:] {
			switch ch {
			case 'R':
				if c.FDEEncoding, ok = ar.u8(); !ok {
					return nil, errShort
				}
			case 'L':
				if _, ok = ar.u8(); !ok {
					return nil, errShort
				}
			case 'P':
				enc, ok := ar.u8()
				if !ok {
					return nil, errShort
				}
				// Only its size matters: read the format alone.
				if _, ok = ar.pointer(enc&0x0f, 0, 8); !ok {
					return nil, errShort
				}
			case 'S':
				c.Signal = true
			case 'B', 'G':
				// AArch64 and memory tagging markers: no data.
			default:
				// An augmentation we do not know: its data is skipped
				// by the length, but we cannot know what it means.
				return nil, fmt.Errorf("augmentation %q", aug)
			}
		}
		r.off += n
	} else if aug != "" {
		return nil, fmt.Errorf("augmentation %q", aug)
	}
	c.Instructions = r.b[r.off:]
	return c, nil
}

func parseFDE(r *reader, c *CIE, addr uint64) (FDE, error) {
	f := FDE{CIE: c}
	enc := c.FDEEncoding
	begin, ok := r.pointer(enc, addr, c.AddressSize)
	if !ok {
		return f, errShort
	}
	// The range is a plain number in the same format: no pc-relative or
	// indirect application.
	rng, ok := r.pointer(enc&0x0f, 0, c.AddressSize)
	if !ok {
		return f, errShort
	}
	if c.augmentationZ {
		n, ok := r.uleb()
		if !ok || n > uint64(len(r.b))-r.off {
			return f, errShort
		}
		r.off += n
	}
	f.Begin = begin
	f.End = begin + rng
	if f.End < f.Begin {
		return f, errors.New("range wraps")
	}
	f.Instructions = r.b[r.off:]
	return f, nil
}

// DW_EH_PE_* pointer encodings.
const (
	peAbsptr  = 0x00
	peUleb    = 0x01
	peUdata2  = 0x02
	peUdata4  = 0x03
	peUdata8  = 0x04
	peSleb    = 0x09
	peSdata2  = 0x0a
	peSdata4  = 0x0b
	peSdata8  = 0x0c
	pePCRel   = 0x10
	peOmit    = 0xff
	peIndir   = 0x80
	peApplies = 0x70
)

// reader reads a byte slice from off, never past its end.
type reader struct {
	b   []byte
	off uint64
}

func (r *reader) take(n uint64) ([]byte, bool) {
	if n > uint64(len(r.b)) || r.off > uint64(len(r.b))-n {
		return nil, false
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s, true
}

// uint reads an n-byte (1, 2, 4 or 8) little-endian integer.
func (r *reader) uint(n uint64) (uint64, bool) {
	s, ok := r.take(n)
	if !ok {
		return 0, false
	}
	switch n {
	case 1:
		return uint64(s[0]), true
	case 2:
		return uint64(binary.LittleEndian.Uint16(s)), true
	case 4:
		return uint64(binary.LittleEndian.Uint32(s)), true
	}
	return binary.LittleEndian.Uint64(s), true
}

func (r *reader) u8() (uint8, bool)   { v, ok := r.uint(1); return uint8(v), ok }
func (r *reader) u32() (uint32, bool) { v, ok := r.uint(4); return uint32(v), ok }
func (r *reader) u64() (uint64, bool) { return r.uint(8) }

// id reads an entry's CIE id or CIE pointer: 8 bytes in the entries of
// 64-bit DWARF (long), else 4.
func (r *reader) id(long bool) (uint64, bool) {
	if long {
		return r.uint(8)
	}
	return r.uint(4)
}

func (r *reader) uleb() (uint64, bool) {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c, ok := r.u8()
		if !ok {
			return 0, false
		}
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		if c&0x80 == 0 {
			return v, true
		}
	}
}

func (r *reader) sleb() (int64, bool) {
	var v int64
	shift := uint(0)
	for {
		c, ok := r.u8()
		if !ok {
			return 0, false
		}
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, true
		}
	}
}

func (r *reader) cstring() (string, bool) {
	for i := r.off; i < uint64(len(r.b)); i++ {
		if r.b[i] == 0 {
			s := string(r.b[r.off:i])
			r.off = i + 1
			return s, true
		}
	}
	return "", false
}

// pointer reads a value in DW_EH_PE encoding enc; a pc-relative one is
// relative to where it is read (secAddr plus the offset in the section).
// Indirect pointers would need the process's memory: they fail.
func (r *reader) pointer(enc uint8, secAddr uint64, addrSize uint8) (uint64, bool) {
	if enc == peOmit {
		return 0, true
	}
	pos := secAddr + r.off
	var v uint64
	var ok bool
	switch enc & 0x0f {
	case peAbsptr:
		if addrSize == 4 {
			v, ok = r.uint(4)
		} else {
			v, ok = r.uint(8)
		}
	case peUleb:
		v, ok = r.uleb()
	case peUdata2:
		v, ok = r.uint(2)
	case peUdata4:
		v, ok = r.uint(4)
	case peUdata8, peSdata8:
		v, ok = r.uint(8)
	case peSleb:
		var x int64
		x, ok = r.sleb()
		v = uint64(x)
	case peSdata2:
		v, ok = r.uint(2)
		v = uint64(int64(int16(v)))
	case peSdata4:
		v, ok = r.uint(4)
		v = uint64(int64(int32(v)))
	default:
		return 0, false
	}
	if !ok || enc&peIndir != 0 {
		return 0, false
	}
	switch enc & peApplies {
	case 0:
	case pePCRel:
		v += pos
	default:
		// datarel, textrel, funcrel: not used by x86-64 toolchains in
		// these sections.
		return 0, false
	}
	return v, true
}
