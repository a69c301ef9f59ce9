package unwind

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/dtrace-go/dtrace/symbol"
)

// Table is the unwind rows of one object, by file offset: the BPF
// unwinder finds the object of a PC through its mapping (the VMA's file
// and page offset) and looks up PC - vm_start + vm_pgoff*pagesize, so a
// table serves every process that maps the file, wherever it is loaded.
type Table struct {
	// Rows are sorted by PC (a file offset); a row covers up to the next
	// one; ranges without CFI are CFANone rows.
	Rows []Row
	// FDEs is how many FDEs the rows came from.
	FDEs int
}

// MaxRows bounds one object's table: 16 bytes a row, 64 MiB.
const MaxRows = 1 << 22

// RowSize is the size of one encoded row (internal/abi.UWRow*).
const RowSize = 16

// Build reads the call-frame information of f: its .eh_frame, then, for
// code that .eh_frame does not cover, its own .debug_frame and that of
// debug (its separate debug file; may be nil). Rows are keyed by file
// offset in f. A section that fails part way gives the FDEs read before
// the fault.
func Build(f, debug *elf.File) (*Table, error) {
	var errs []error
	eh, err := sectionFDEs(f, ".eh_frame", EHFrame)
	if err != nil {
		errs = append(errs, err)
	}
	extra, err := sectionFDEs(f, ".debug_frame", DebugFrame)
	if err != nil {
		errs = append(errs, err)
	}
	if debug != nil && debug != f {
		more, err := sectionFDEs(debug, ".debug_frame", DebugFrame)
		if err != nil {
			errs = append(errs, err)
		}
		extra = append(extra, more...)
	}
	t, err := fromFDEs(f, eh, extra)
	if err != nil {
		return nil, err
	}
	if len(t.Rows) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return t, nil
}

// BuildObject is Build for the object f opened from path, with its
// separate debug file when one is found. The .debug_frame of the debug
// file covers code that the object's own CFI does not (code built
// without unwind tables, then stripped). An object with no CFI of its own
// may wait for debuginfod to find it (symbol.DebugFile, within
// DEBUGINFOD_TIMEOUT); one with CFI takes a debug file only if it is on
// this machine already. The vdso ("[vdso]") has none.
func BuildObject(f *elf.File, path string) (*Table, error) {
	var debug *elf.File
	if path != "[vdso]" {
		find := symbol.LocalDebugFile
		if f.Section(".eh_frame") == nil && f.Section(".debug_frame") == nil {
			find = symbol.DebugFile
		}
		if p := find(path); p != "" {
			if d, err := elf.Open(p); err == nil {
				defer d.Close()
				debug = d
			}
		}
	}
	return Build(f, debug)
}

func sectionFDEs(f *elf.File, name string, sec Section) ([]FDE, error) {
	s := f.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	if s.Size > 1<<30 {
		return nil, fmt.Errorf("%s: %d bytes", name, s.Size)
	}
	data, err := s.Data()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	fdes, err := Parse(data, s.Addr, sec)
	if err != nil {
		err = fmt.Errorf("%s: %w", name, err)
	}
	return fdes, err
}

// segment is an executable PT_LOAD: virtual addresses [vaddr, vaddr+size)
// are at file offsets from off.
type segment struct{ vaddr, size, off uint64 }

func execSegments(f *elf.File) []segment {
	var segs []segment
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			segs = append(segs, segment{p.Vaddr, p.Filesz, p.Off})
		}
	}
	return segs
}

// fromFDEs merges the FDEs (primary first; extra only where no primary
// FDE covers) into a table by file offset.
func fromFDEs(f *elf.File, primary, extra []FDE) (*Table, error) {
	sort.SliceStable(primary, func(i, j int) bool { return primary[i].Begin < primary[j].Begin })
	fdes := primary
	for _, x := range extra {
		i := sort.Search(len(primary), func(i int) bool { return primary[i].End > x.Begin })
		if i < len(primary) && primary[i].Begin < x.End {
			continue
		}
		fdes = append(fdes, x)
	}
	sort.SliceStable(fdes, func(i, j int) bool { return fdes[i].Begin < fdes[j].Begin })
	segs := execSegments(f)
	t := &Table{}
	var last uint64 // end (file offset) of the last FDE added
	for _, fde := range fdes {
		seg, ok := segmentOf(segs, fde.Begin)
		if !ok {
			continue
		}
		begin := fde.Begin - seg.vaddr + seg.off
		end := min(fde.End, seg.vaddr+seg.size) - seg.vaddr + seg.off
		if end > 1<<32 {
			continue // the BPF rows hold 32-bit offsets
		}
		if len(t.Rows) > 0 && begin < last {
			continue // overlaps the FDE before
		}
		rows, _ := fde.Rows()
		if len(rows) == 0 {
			continue
		}
		if len(t.Rows) > 0 && begin > last {
			t.add(Row{PC: last})
		}
		for _, r := range rows {
			if r.PC >= fde.End {
				break
			}
			r.PC = r.PC - seg.vaddr + seg.off
			t.add(r)
		}
		last = end
		t.FDEs++
		if len(t.Rows) > MaxRows {
			return nil, fmt.Errorf("cfi: more than %d rows", MaxRows)
		}
	}
	if len(t.Rows) > 0 {
		t.add(Row{PC: last})
	}
	return t, nil
}

// add appends r unless the row before has the same rule.
func (t *Table) add(r Row) {
	if n := len(t.Rows); n > 0 {
		if t.Rows[n-1].sameRule(r) {
			return
		}
		if t.Rows[n-1].PC == r.PC {
			t.Rows[n-1] = r
			if n > 1 && t.Rows[n-2].sameRule(r) {
				t.Rows = t.Rows[:n-1]
			}
			return
		}
	}
	t.Rows = append(t.Rows, r)
}

func segmentOf(segs []segment, vaddr uint64) (segment, bool) {
	for _, s := range segs {
		if vaddr >= s.vaddr && vaddr-s.vaddr < s.size {
			return s, true
		}
	}
	return segment{}, false
}

// Lookup returns the row covering file offset off, if any.
func (t *Table) Lookup(off uint64) (Row, bool) {
	i := sort.Search(len(t.Rows), func(i int) bool { return t.Rows[i].PC > off })
	if i == 0 {
		return Row{}, false
	}
	return t.Rows[i-1], true
}

// Encode writes the rows as the BPF unwinder reads them (internal/abi
// UWRow*): RowSize bytes each, little-endian u32 offset, u8 CFA kind, u8
// rbp rule | rbx rule << 4, u16 aux, i32 CFA offset, i16 rbp offset, i16
// rbx offset (savedRule keeps those in 16 bits).
func (t *Table) Encode() []byte {
	b := make([]byte, RowSize*len(t.Rows))
	for i, r := range t.Rows {
		e := b[i*RowSize:]
		binary.LittleEndian.PutUint32(e[0:], uint32(r.PC))
		e[4], e[5] = byte(r.CFA), byte(r.RBP)|byte(r.RBX)<<4
		binary.LittleEndian.PutUint16(e[6:], r.Aux)
		binary.LittleEndian.PutUint32(e[8:], uint32(r.CFAOff))
		binary.LittleEndian.PutUint16(e[12:], uint16(r.RBPOff))
		binary.LittleEndian.PutUint16(e[14:], uint16(r.RBXOff))
	}
	return b
}

// BuildID returns the object's GNU build id as hex, or "".
func BuildID(f *elf.File) string {
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		return ""
	}
	b, err := s.Data()
	if err != nil || len(b) < 16 {
		return ""
	}
	namesz, descsz := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
	if binary.LittleEndian.Uint32(b[8:]) != 3 || namesz != 4 {
		return ""
	}
	start := uint64(12 + 4)
	if uint64(descsz) > uint64(len(b))-start {
		return ""
	}
	return fmt.Sprintf("%x", b[start:start+uint64(descsz)])
}
