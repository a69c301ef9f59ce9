package symbol

import (
	"bytes"
	"debug/elf"
	"testing"
)

// TestReadRange: a range a crafted header names beyond the file is refused
// before anything is allocated for it.
func TestReadRange(t *testing.T) {
	r := bytes.NewReader(make([]byte, 100))
	for _, tc := range []struct {
		off, size uint64
		ok        bool
	}{
		{0, 100, true}, {10, 90, true}, {100, 0, true},
		{0, 101, false}, {50, 1 << 40, false}, {1 << 63, 1, false}, {90, ^uint64(0) - 50, false}, {101, 0, false},
	} {
		b, err := readRange(r, 100, tc.off, tc.size)
		if (err == nil) != tc.ok || (err == nil && uint64(len(b)) != tc.size) {
			t.Errorf("readRange(%d, %d) = %d bytes, %v", tc.off, tc.size, len(b), err)
		}
	}
}

// TestWritableOffset: only addresses wholly within the file bytes of a
// writable segment translate.
func TestWritableOffset(t *testing.T) {
	o := &Object{objectData: &objectData{loads: []elf.ProgHeader{
		{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_X, Vaddr: 0x1000, Off: 0x1000, Filesz: 0x1000, Memsz: 0x1000},
		{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_W, Vaddr: 0x3000, Off: 0x2000, Filesz: 0x100, Memsz: 0x800},
	}}}
	for _, tc := range []struct {
		vaddr uint64
		off   uint64
		ok    bool
	}{
		{0x3000, 0x2000, true}, {0x30fe, 0x20fe, true},
		{0x30ff, 0, false},         // straddles the end of the file bytes
		{0x3100, 0, false},         // .bss: memory, no file page
		{0x1800, 0, false},         // code
		{0x2fff, 0, false},         // before the segment
		{^uint64(0) - 1, 0, false}, // wraps
		{0x3000 + 1<<63, 0, false},
	} {
		off, ok := o.WritableOffset(tc.vaddr, 2)
		if ok != tc.ok || off != tc.off {
			t.Errorf("WritableOffset(%#x) = %#x, %v; want %#x, %v", tc.vaddr, off, ok, tc.off, tc.ok)
		}
	}
}
