package symbol

import (
	"bytes"
	"debug/elf"
	"strings"
	"testing"
)

// FuzzObject feeds the ELF reader files any user could hand dtrace (a
// -c command, a library a traced process maps): whatever the bytes, it
// returns an Object or an error, and reads of notes and code stay within
// the file. Seeds in testdata/fuzz/FuzzObject are real executables from
// /usr/bin.
func FuzzObject(f *testing.F) {
	// A crafted build id must not send the reader to real debug files.
	DebugDir = "/nonexistent"
	f.Fuzz(func(t *testing.T, data []byte) {
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		o, err := newObject(ef, "fuzz")
		if err != nil {
			return
		}
		r := bytes.NewReader(data)
		for _, s := range o.Sections() {
			if notes, err := readNotes(r, int64(len(data)), s); err == nil {
				for _, n := range notes {
					if len(n.Desc) > len(data) || len(n.Owner) > len(data) {
						t.Fatalf("note larger than the file")
					}
				}
			}
			o.FileOffset(s.Addr)
		}
		funcs := o.Funcs()
		for i, fn := range funcs {
			if i > 100 {
				break
			}
			if got, ok := o.Lookup(fn.Value); ok && got.Value > fn.Value {
				t.Fatalf("Lookup(%#x) = %v: a function after the address", fn.Value, got)
			}
			if off, ok := o.FileOffset(fn.Value); ok {
				o.Vaddr(off)
			}
			o.Executable(fn.Value)
			o.SymbolValue(fn.Name)
		}
		for _, p := range o.loads {
			o.Lookup(p.Vaddr)
			o.Vaddr(p.Off)
		}
	})
}

// FuzzParseNotes splits note sections: every note returned lies within
// the section. Seeds are the .note.stapsdt section of PostgreSQL 15 and
// the .note.gnu.build-id of /usr/bin/clear_console.
func FuzzParseNotes(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		notes, err := parseNotes(data)
		if err != nil {
			return
		}
		total := 0
		for _, n := range notes {
			total += 12 + len(n.Owner) + len(n.Desc)
		}
		if total > len(data)+len(notes) {
			t.Fatalf("notes of %d bytes from a section of %d", total, len(data))
		}
	})
}

// FuzzParseMaps parses /proc/PID/maps text: whatever the lines, the
// result is sorted and every lookup answers. Seeds are real maps files
// (a shell, PostgreSQL, a Go program).
func FuzzParseMaps(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		maps, err := ParseMaps(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(maps) > strings.Count(string(data), "\n")+1 {
			t.Fatalf("%d mappings from %d lines", len(maps), strings.Count(string(data), "\n")+1)
		}
		p := &Process{PID: -1, Maps: maps}
		for i, m := range maps {
			if i > 0 && maps[i-1].Start > m.Start {
				t.Fatalf("mappings not sorted")
			}
			p.Mapping(m.Start)
			p.Mapping(m.End)
			m.Exec()
			m.File()
		}
		for _, mod := range p.Modules() {
			if mod.Name == "" || len(mod.Maps) == 0 {
				t.Fatalf("module %+v", mod)
			}
		}
	})
}
