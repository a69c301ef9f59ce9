package symbol

import (
	"debug/elf"
	"strings"
	"testing"
)

const kallsymsText = `ffffffff81000000 T _stext
ffffffff81000000 T _text
ffffffff81001000 t helper
0000000000000000 A fixed_percpu_data
ffffffff81002000 T schedule
ffffffffc0100000 t mod_init	[ext4]
ffffffffc0100100 t mod_work	[ext4]
ffffffffc0200000 t other	[xfs]
`

func TestReadKallsyms(t *testing.T) {
	k, err := ReadKallsyms(strings.NewReader(kallsymsText))
	if err != nil {
		t.Fatal(err)
	}
	if k.Len() != 7 {
		t.Errorf("Len = %d, want 7 (the absolute symbol left out)", k.Len())
	}
	for _, tc := range []struct {
		addr    uint64
		mod, fn string
		off     uint64
		ok      bool
	}{
		{0xffffffff80000000, "", "", 0, false},
		{0xffffffff81000000, "vmlinux", "_stext", 0, true},
		{0xffffffff81000010, "vmlinux", "_stext", 0x10, true},
		{0xffffffff81001fff, "vmlinux", "helper", 0xfff, true},
		{0xffffffff81002004, "vmlinux", "schedule", 4, true},
		{0xffffffffc0100104, "ext4", "mod_work", 4, true},
		{0xffffffffc0200000, "xfs", "other", 0, true},
	} {
		mod, fn, off, ok := k.Lookup(tc.addr)
		if mod != tc.mod || fn != tc.fn || off != tc.off || ok != tc.ok {
			t.Errorf("Lookup(%#x) = %s`%s+%#x %v, want %s`%s+%#x %v", tc.addr, mod, fn, off, ok, tc.mod, tc.fn, tc.off, tc.ok)
		}
	}
	if a, ok := k.Addr("mod_init"); !ok || a != 0xffffffffc0100000 {
		t.Errorf("Addr(mod_init) = %#x, %v", a, ok)
	}
	for _, tc := range []struct{ addr, base uint64 }{
		{0xffffffff81002004, 0xffffffff81000000},
		{0xffffffffc0100104, 0xffffffffc0100000},
		{0xffffffffc0200008, 0xffffffffc0200000},
	} {
		if b, ok := k.ModuleBase(tc.addr); !ok || b != tc.base {
			t.Errorf("ModuleBase(%#x) = %#x %v, want %#x", tc.addr, b, ok, tc.base)
		}
	}
}

func TestParseMaps(t *testing.T) {
	const maps = `563424284000-563424289000 r-xp 00002000 fe:00 247026                     /usr/bin/cat
563424282000-563424284000 r--p 00000000 fe:00 247026                     /usr/bin/cat
563433056000-563433077000 rw-p 00000000 00:00 0                          [heap]
7f0a94dc1000-7f0a94de3000 rw-p 00000000 00:00 0 
7f0a94e3b000-7f0a94e3c000 r-xp 00001000 fe:00 316536                     /tmp/a b/lib (deleted)
`
	ms, err := ParseMaps(strings.NewReader(maps))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 5 || ms[0].Start != 0x563424282000 || ms[1].Offset != 0x2000 || !ms[1].Exec() {
		t.Fatalf("ParseMaps = %+v", ms)
	}
	if ms[4].Path != "/tmp/a b/lib" || ms[4].Inode != 316536 || !ms[4].File() {
		t.Errorf("mapping with a space in its deleted path: %+v", ms[4])
	}
	if ms[2].File() || ms[3].File() {
		t.Error("anonymous mappings taken for files")
	}
	p := &Process{Exe: "/usr/bin/cat", Maps: ms}
	if m := p.Mapping(0x563424285000); m == nil || m.Offset != 0x2000 {
		t.Errorf("Mapping(text) = %+v", m)
	}
	if m := p.Mapping(0x563424289000); m != nil {
		t.Errorf("Mapping(end of text) = %+v", m)
	}
	mods := p.Modules()
	if len(mods) != 2 || mods[0].Name != "cat" || !mods[0].IsExe || len(mods[0].Maps) != 2 || mods[1].Name != "lib" {
		t.Errorf("Modules = %+v", mods)
	}
}

func TestParseNotes(t *testing.T) {
	// namesz 8 ("stapsdt\0"), descsz 5, type 3, then a second note with
	// an empty name.
	b := []byte{8, 0, 0, 0, 5, 0, 0, 0, 3, 0, 0, 0}
	b = append(b, "stapsdt\x00"...)
	b = append(b, 1, 2, 3, 4, 5, 0, 0, 0)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0)
	notes, err := parseNotes(b, elf.ELFCLASS64)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 2 || notes[0].Owner != "stapsdt" || notes[0].Type != 3 || string(notes[0].Desc) != "\x01\x02\x03\x04\x05" || notes[1].Type != 7 {
		t.Errorf("parseNotes = %+v", notes)
	}
	if _, err := parseNotes(b[:20], elf.ELFCLASS64); err == nil {
		t.Error("truncated notes: no error")
	}
}
