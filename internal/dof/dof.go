// Package dof encodes and decodes DOF, the DTrace Object Format that
// illumos' dtrace -G writes: a header, a table of section headers and
// the sections' data, describing user-land providers (USDT), their
// probes, the probes' argument types and where the probe sites are, as
// offsets into the functions that hold them.
//
// The layout is the public one of illumos' <sys/dtrace.h> (dof_hdr_t,
// dof_sec_t, dof_provider_t, dof_probe_t, dof_relohdr_t,
// dof_relodesc_t). Each provider has its own string table, probe,
// argument-mapping, offset and is-enabled offset sections, and a
// relocation section whose entries name the function each probe's
// dofpr_addr is relative to. Loadable sections come first; the
// non-loadable ones (the comment and the utsname) follow them, and are
// left out when the DOF is stripped.
package dof

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Identification bytes and header values.
const (
	Magic = "\x7fDOF"

	ModelILP32 = 1
	ModelLP64  = 2

	EncodeLSB = 1

	Version2 = 2 // the version with is-enabled offsets (DOF_VERSION_2)

	difVersion = 2 // DIF_VERSION_2
	difIRegs   = 8 // DIF_DIR_NREGS
	difTRegs   = 8 // DIF_DTR_NREGS

	HeaderSize   = 64
	SectionSize  = 32
	ProviderSize = 44
	ProbeSize    = 48
	RelocSize    = 24
	RelHdrSize   = 12

	// SecIdxNone is DOF_SECIDX_NONE: no section.
	SecIdxNone = 0xffffffff

	// SecfLoad is DOF_SECF_LOAD: the section is loaded with the DOF.
	SecfLoad = 1

	// RelocSetX is DOF_RELO_SETX: the target gets the address of the
	// named symbol.
	RelocSetX = 1
)

// Section types (DOF_SECT_*) used here.
const (
	SectNone     = 0
	SectComments = 1
	SectStrtab   = 8
	SectRelTab   = 10
	SectURelHdr  = 12
	SectProvider = 15
	SectProbes   = 16
	SectPrArgs   = 17
	SectPrOffs   = 18
	SectUTSName  = 20
	SectPrEnOffs = 26
)

// Stability and dependency class values of an attribute (dtrace_attribute_t).
const (
	StabInternal = iota
	StabPrivate
	StabObsolete
	StabExternal
	StabUnstable
	StabEvolving
	StabStable
	StabStandard
)

const (
	ClassUnknown = iota
	ClassCPU
	ClassPlatform
	ClassGroup
	ClassISA
	ClassCommon
)

// Attr is one stability triple: name stability, data stability,
// dependency class.
type Attr struct{ Name, Data, Class uint8 }

func (a Attr) encode() uint32 {
	return uint32(a.Name)<<24 | uint32(a.Data)<<16 | uint32(a.Class)<<8
}

func decodeAttr(v uint32) Attr {
	return Attr{uint8(v >> 24), uint8(v >> 16), uint8(v >> 8)}
}

// Provider is one USDT provider.
type Provider struct {
	Name string
	// The attributes of the provider, module, function, name and
	// arguments (#pragma D attributes).
	ProvAttr, ModAttr, FuncAttr, NameAttr, ArgsAttr Attr
	Probes                                          []Probe
}

// Probe is one probe of a provider in one function: its sites there.
type Probe struct {
	Name, Func string
	// Addr is dofpr_addr as written, the function's address; a
	// relocation naming Func is emitted for it either way.
	Addr uint64
	// NArgs are the native argument types, XArgs the translated ones
	// and Mapping, one per translated argument, the index of the native
	// argument it is made from.
	NArgs, XArgs []string
	Mapping      []uint8
	// Offs are the sites' offsets into Func, EnOffs those of its
	// is-enabled sites.
	Offs, EnOffs []uint32
}

// Options are what the DOF carries besides the providers.
type Options struct {
	LP64 bool
	// Comment (the D version, as illumos' "D 1.x") and UTSName (the raw
	// struct utsname of the machine that wrote it) are the
	// non-loadable sections; Strip leaves them out.
	Comment string
	UTSName []byte
	Strip   bool
}

// Reloc is one relocation of the DOF: the eight bytes at Offset in the
// DOF get the address of the symbol Name (for an object, the caller
// turns it into an ELF relocation).
type Reloc struct {
	Name   string
	Offset uint64
}

type section struct {
	typ, align, flags, entsize uint32
	data                       []byte
}

// strtab is a DOF string table: offset 0 is the empty string; strings are
// appended, so a probe's argument types are contiguous.
type strtab struct{ b []byte }

func (s *strtab) add(str string) uint32 {
	if len(s.b) == 0 {
		s.b = []byte{0}
	}
	off := uint32(len(s.b))
	s.b = append(s.b, str...)
	s.b = append(s.b, 0)
	return off
}

var le = binary.LittleEndian

// Encode writes the DOF of provs. It returns the DOF and the
// relocations of the probes' dofpr_addr fields, with offsets from the
// start of the DOF.
func Encode(provs []Provider, opt Options) ([]byte, []Reloc, error) {
	var secs []section
	add := func(s section) uint32 {
		secs = append(secs, s)
		return uint32(len(secs) - 1)
	}
	type pending struct {
		sec   uint32 // the probes section
		names []string
		offs  []uint64 // within the probes section
	}
	var relocs []pending
	for _, pv := range provs {
		var st strtab
		name := st.add(pv.Name)
		var probes, args, offs, enoffs []byte
		var rels []byte
		var relNames []string
		var relOffs []uint64
		var nArg, nOff, nEnOff uint32
		for _, pr := range pv.Probes {
			if len(pr.NArgs) > 255 || len(pr.XArgs) > 255 || len(pr.Offs) > 0xffff || len(pr.EnOffs) > 0xffff {
				return nil, nil, fmt.Errorf("probe %s:%s: too many arguments or sites", pv.Name, pr.Name)
			}
			if len(pr.Mapping) != len(pr.XArgs) {
				return nil, nil, fmt.Errorf("probe %s:%s: %d translated arguments, %d mappings", pv.Name, pr.Name, len(pr.XArgs), len(pr.Mapping))
			}
			for _, m := range pr.Mapping {
				if int(m) >= len(pr.NArgs) {
					return nil, nil, fmt.Errorf("probe %s:%s: mapping to native argument %d of %d", pv.Name, pr.Name, m, len(pr.NArgs))
				}
			}
			p := make([]byte, ProbeSize)
			le.PutUint64(p[0:], pr.Addr)
			fn := st.add(pr.Func)
			le.PutUint32(p[8:], fn)
			le.PutUint32(p[12:], st.add(pr.Name))
			le.PutUint32(p[16:], typeList(&st, pr.NArgs))
			le.PutUint32(p[20:], typeList(&st, pr.XArgs))
			le.PutUint32(p[24:], nArg)
			le.PutUint32(p[28:], nOff)
			p[32] = uint8(len(pr.NArgs))
			p[33] = uint8(len(pr.XArgs))
			le.PutUint16(p[34:], uint16(len(pr.Offs)))
			le.PutUint32(p[36:], nEnOff)
			le.PutUint16(p[40:], uint16(len(pr.EnOffs)))
			args = append(args, pr.Mapping...)
			nArg += uint32(len(pr.Mapping))
			for _, o := range pr.Offs {
				offs = le.AppendUint32(offs, o)
			}
			nOff += uint32(len(pr.Offs))
			for _, o := range pr.EnOffs {
				enoffs = le.AppendUint32(enoffs, o)
			}
			nEnOff += uint32(len(pr.EnOffs))
			// The relocation of dofpr_addr: the address of the
			// function, by name (DOF_RELO_SETX).
			r := make([]byte, RelocSize)
			le.PutUint32(r[0:], fn)
			le.PutUint32(r[4:], RelocSetX)
			le.PutUint64(r[8:], uint64(len(probes)))
			rels = append(rels, r...)
			relNames = append(relNames, pr.Func)
			relOffs = append(relOffs, uint64(len(probes)))
			probes = append(probes, p...)
		}
		strSec := add(section{typ: SectStrtab, align: 1, flags: SecfLoad, data: st.b})
		probeSec := add(section{typ: SectProbes, align: 8, flags: SecfLoad, entsize: ProbeSize, data: probes})
		argSec := add(section{typ: SectPrArgs, align: 1, flags: SecfLoad, entsize: 1, data: args})
		offSec := add(section{typ: SectPrOffs, align: 4, flags: SecfLoad, entsize: 4, data: offs})
		enSec := uint32(SecIdxNone)
		if len(enoffs) > 0 {
			enSec = add(section{typ: SectPrEnOffs, align: 4, flags: SecfLoad, entsize: 4, data: enoffs})
		}
		pvb := make([]byte, ProviderSize)
		le.PutUint32(pvb[0:], strSec)
		le.PutUint32(pvb[4:], probeSec)
		le.PutUint32(pvb[8:], argSec)
		le.PutUint32(pvb[12:], offSec)
		le.PutUint32(pvb[16:], name)
		for i, a := range []Attr{pv.ProvAttr, pv.ModAttr, pv.FuncAttr, pv.NameAttr, pv.ArgsAttr} {
			le.PutUint32(pvb[20+4*i:], a.encode())
		}
		le.PutUint32(pvb[40:], enSec)
		add(section{typ: SectProvider, align: 4, flags: SecfLoad, data: pvb})
		if len(rels) > 0 {
			relSec := add(section{typ: SectRelTab, align: 8, flags: SecfLoad, entsize: RelocSize, data: rels})
			h := make([]byte, RelHdrSize)
			le.PutUint32(h[0:], strSec)
			le.PutUint32(h[4:], relSec)
			le.PutUint32(h[8:], probeSec)
			add(section{typ: SectURelHdr, align: 4, flags: SecfLoad, data: h})
			relocs = append(relocs, pending{probeSec, relNames, relOffs})
		}
	}
	if !opt.Strip {
		add(section{typ: SectComments, align: 1, data: append([]byte(opt.Comment), 0)})
		if len(opt.UTSName) > 0 {
			add(section{typ: SectUTSName, align: 1, data: opt.UTSName})
		}
	}

	// Lay out: header, section headers, then the loadable sections'
	// data, then the others'.
	off := uint64(HeaderSize + SectionSize*len(secs))
	offsets := make([]uint64, len(secs))
	var loadsz uint64
	for pass := 0; pass < 2; pass++ {
		for i, s := range secs {
			if (s.flags&SecfLoad != 0) != (pass == 0) {
				continue
			}
			off = alignUp(off, uint64(s.align))
			offsets[i] = off
			off += uint64(len(s.data))
		}
		if pass == 0 {
			loadsz = off
		}
	}
	out := make([]byte, off)
	copy(out, Magic)
	out[4] = ModelILP32
	if opt.LP64 {
		out[4] = ModelLP64
	}
	out[5] = EncodeLSB
	out[6] = Version2
	out[7] = difVersion
	out[8] = difIRegs
	out[9] = difTRegs
	le.PutUint32(out[16:], 0) // flags
	le.PutUint32(out[20:], HeaderSize)
	le.PutUint32(out[24:], SectionSize)
	le.PutUint32(out[28:], uint32(len(secs)))
	le.PutUint64(out[32:], HeaderSize)
	le.PutUint64(out[40:], loadsz)
	le.PutUint64(out[48:], off)
	for i, s := range secs {
		h := out[HeaderSize+SectionSize*i:]
		le.PutUint32(h[0:], s.typ)
		le.PutUint32(h[4:], s.align)
		le.PutUint32(h[8:], s.flags)
		le.PutUint32(h[12:], s.entsize)
		le.PutUint64(h[16:], offsets[i])
		le.PutUint64(h[24:], uint64(len(s.data)))
		copy(out[offsets[i]:], s.data)
	}
	var rs []Reloc
	for _, p := range relocs {
		for i, n := range p.names {
			rs = append(rs, Reloc{Name: n, Offset: offsets[p.sec] + p.offs[i]})
		}
	}
	return out, rs, nil
}

// typeList adds a probe's argument types to the string table, one after
// the other, and returns the first's offset (0 for none).
func typeList(st *strtab, types []string) uint32 {
	first := uint32(0)
	for i, t := range types {
		o := st.add(t)
		if i == 0 {
			first = o
		}
	}
	return first
}

func alignUp(v, a uint64) uint64 {
	if a <= 1 {
		return v
	}
	return (v + a - 1) &^ (a - 1)
}

// Section is a decoded section header.
type Section struct {
	Type, Align, Flags, EntSize uint32
	Offset, Size                uint64
}

// File is a decoded DOF.
type File struct {
	Model, Encoding, Version uint8
	LoadSize, FileSize       uint64
	Sections                 []Section
	Providers                []Provider
	// Comment and UTSName are the non-loadable sections' contents
	// (empty when stripped).
	Comment string
	UTSName []byte
	// Relocs are the relocations of the URELHDR sections, with offsets
	// from the start of the DOF.
	Relocs []Reloc
}

// ErrFormat is returned for data that is not well-formed DOF.
var ErrFormat = errors.New("dof: malformed DOF")

// Decode reads a DOF that Encode wrote (little-endian DOF with
// the section types above; others are listed in Sections and skipped).
func Decode(b []byte) (*File, error) {
	if len(b) < HeaderSize || string(b[:4]) != Magic {
		return nil, fmt.Errorf("%w: bad magic", ErrFormat)
	}
	if b[5] != EncodeLSB {
		return nil, fmt.Errorf("%w: not little-endian", ErrFormat)
	}
	f := &File{Model: b[4], Encoding: b[5], Version: b[6]}
	secsize := le.Uint32(b[24:])
	secnum := le.Uint32(b[28:])
	secoff := le.Uint64(b[32:])
	f.LoadSize = le.Uint64(b[40:])
	f.FileSize = le.Uint64(b[48:])
	if secsize != SectionSize || f.FileSize != uint64(len(b)) || f.LoadSize > f.FileSize ||
		secoff+uint64(secnum)*SectionSize > uint64(len(b)) {
		return nil, fmt.Errorf("%w: bad header", ErrFormat)
	}
	for i := uint32(0); i < secnum; i++ {
		h := b[secoff+uint64(i)*SectionSize:]
		s := Section{le.Uint32(h[0:]), le.Uint32(h[4:]), le.Uint32(h[8:]), le.Uint32(h[12:]), le.Uint64(h[16:]), le.Uint64(h[24:])}
		if s.Offset > uint64(len(b)) || s.Size > uint64(len(b))-s.Offset {
			return nil, fmt.Errorf("%w: section %d out of bounds", ErrFormat, i)
		}
		f.Sections = append(f.Sections, s)
	}
	data := func(i uint32, typ uint32) ([]byte, error) {
		if i == SecIdxNone {
			return nil, nil
		}
		if i >= uint32(len(f.Sections)) || f.Sections[i].Type != typ {
			return nil, fmt.Errorf("%w: section %d is not of type %d", ErrFormat, i, typ)
		}
		s := f.Sections[i]
		return b[s.Offset : s.Offset+s.Size], nil
	}
	for i, s := range f.Sections {
		sd := b[s.Offset : s.Offset+s.Size]
		switch s.Type {
		case SectComments:
			f.Comment = cstring(sd, 0)
		case SectUTSName:
			f.UTSName = sd
		case SectURelHdr:
			if len(sd) < RelHdrSize {
				return nil, fmt.Errorf("%w: short relocation header", ErrFormat)
			}
			st, err := data(le.Uint32(sd[0:]), SectStrtab)
			if err != nil {
				return nil, err
			}
			rt, err := data(le.Uint32(sd[4:]), SectRelTab)
			if err != nil {
				return nil, err
			}
			tgt := le.Uint32(sd[8:])
			if tgt >= uint32(len(f.Sections)) {
				return nil, fmt.Errorf("%w: relocation target %d", ErrFormat, tgt)
			}
			for o := 0; o+RelocSize <= len(rt); o += RelocSize {
				f.Relocs = append(f.Relocs, Reloc{Name: cstring(st, le.Uint32(rt[o:])), Offset: f.Sections[tgt].Offset + le.Uint64(rt[o+8:])})
			}
		case SectProvider:
			pv, err := decodeProvider(sd, data)
			if err != nil {
				return nil, fmt.Errorf("provider section %d: %w", i, err)
			}
			f.Providers = append(f.Providers, pv)
		}
	}
	return f, nil
}

func decodeProvider(sd []byte, data func(uint32, uint32) ([]byte, error)) (Provider, error) {
	var pv Provider
	if len(sd) < ProviderSize {
		return pv, fmt.Errorf("%w: short provider", ErrFormat)
	}
	// The provider's sections: the links at these offsets of
	// dof_provider_t, and the type each must have.
	links := []struct{ at, typ uint32 }{{0, SectStrtab}, {4, SectProbes}, {8, SectPrArgs}, {12, SectPrOffs}, {40, SectPrEnOffs}}
	secs := make([][]byte, len(links))
	for i, l := range links {
		b, err := data(le.Uint32(sd[l.at:]), l.typ)
		if err != nil {
			return pv, err
		}
		secs[i] = b
	}
	st, probes, args, offs, enoffs := secs[0], secs[1], secs[2], secs[3], secs[4]
	var err error
	pv.Name = cstring(st, le.Uint32(sd[16:]))
	attrs := []*Attr{&pv.ProvAttr, &pv.ModAttr, &pv.FuncAttr, &pv.NameAttr, &pv.ArgsAttr}
	for i, a := range attrs {
		*a = decodeAttr(le.Uint32(sd[20+4*i:]))
	}
	u32s := func(b []byte, idx, n uint32) ([]uint32, error) {
		if (uint64(idx)+uint64(n))*4 > uint64(len(b)) {
			return nil, fmt.Errorf("%w: offsets out of bounds", ErrFormat)
		}
		var out []uint32
		for i := idx; i < idx+n; i++ {
			out = append(out, le.Uint32(b[4*i:]))
		}
		return out, nil
	}
	for o := 0; o+ProbeSize <= len(probes); o += ProbeSize {
		p := probes[o:]
		pr := Probe{
			Addr: le.Uint64(p[0:]),
			Func: cstring(st, le.Uint32(p[8:])),
			Name: cstring(st, le.Uint32(p[12:])),
		}
		nargc, xargc := uint32(p[32]), uint32(p[33])
		pr.NArgs = stringList(st, le.Uint32(p[16:]), nargc)
		pr.XArgs = stringList(st, le.Uint32(p[20:]), xargc)
		argidx := le.Uint32(p[24:])
		if uint64(argidx)+uint64(xargc) > uint64(len(args)) {
			return pv, fmt.Errorf("%w: argument mapping out of bounds", ErrFormat)
		}
		if xargc > 0 {
			pr.Mapping = append([]uint8(nil), args[argidx:argidx+xargc]...)
		}
		if pr.Offs, err = u32s(offs, le.Uint32(p[28:]), uint32(le.Uint16(p[34:]))); err != nil {
			return pv, err
		}
		if pr.EnOffs, err = u32s(enoffs, le.Uint32(p[36:]), uint32(le.Uint16(p[40:]))); err != nil {
			return pv, err
		}
		pv.Probes = append(pv.Probes, pr)
	}
	return pv, nil
}

// stringList reads n consecutive strings from st at off.
func stringList(st []byte, off, n uint32) []string {
	var out []string
	for i := uint32(0); i < n; i++ {
		s := cstring(st, off)
		out = append(out, s)
		off += uint32(len(s)) + 1
	}
	return out
}

// cstring is the NUL-terminated string at off in b ("" out of bounds).
func cstring(b []byte, off uint32) string {
	if uint64(off) >= uint64(len(b)) {
		return ""
	}
	s := b[off:]
	for i, c := range s {
		if c == 0 {
			return string(s[:i])
		}
	}
	return string(s)
}
