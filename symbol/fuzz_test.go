package symbol

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
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
		o, err := newObject(ef, "fuzz", false)
		if err != nil {
			return
		}
		r := bytes.NewReader(data)
		for _, s := range o.Sections() {
			if notes, err := readNotes(r, int64(len(data)), s, elf.ELFCLASS64); err == nil {
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
		notes, err := parseNotes(data, elf.ELFCLASS64)
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

// FuzzDebugLink splits .gnu_debuglink sections: a name comes back only
// with its CRC, never with a directory in it.
func FuzzDebugLink(f *testing.F) {
	f.Add([]byte("libc.so.6.debug\x00\x00\x00\x00\xef\xbe\xad\xde"))
	f.Add([]byte("ac61ec5a8eb1396f9fbd350e3169a558528a40.debug\x00\x00\x00\x00\x12\x34\x56\x78"))
	f.Fuzz(func(t *testing.T, data []byte) {
		name, _, err := parseDebugLink(data, binary.LittleEndian)
		if err != nil {
			return
		}
		if name == "" || strings.ContainsAny(name, "/\x00") || len(name)+5 > len(data) {
			t.Fatalf("name %q from %q", name, data)
		}
	})
}

// FuzzDebugData expands .gnu_debugdata sections (xz, then ELF): no
// panic, nothing above the limit, and the symbols of what expands read
// without one. The seed in testdata/fuzz/FuzzDebugData is the section
// of names.c (internal/testprog) made as Fedora makes it.
func FuzzDebugData(f *testing.F) {
	f.Add(xzOf(f, []byte("\x7fELF not really"), 1<<20))
	f.Fuzz(func(t *testing.T, data []byte) {
		ef, err := parseDebugData(data, 1<<20)
		if err != nil {
			return
		}
		syms, _ := ef.Symbols()
		o := &Object{objectData: &objectData{data: map[string]uint64{}}}
		o.addFuncs(syms, ef)
		o.sortFuncs()
		for _, fn := range o.funcs {
			if got, ok := o.Lookup(fn.Value); ok && (got.Value > fn.Value || fn.Value >= got.limit()) {
				t.Fatalf("Lookup(%#x) = %+v", fn.Value, got)
			}
		}
	})
}

// FuzzPerfMap parses perf maps: every function has a size, does not wrap
// around, and is found at its first byte (or another written later is).
func FuzzPerfMap(f *testing.F) {
	f.Add([]byte("7f0000001000 40 LazyCompile:~foo /app/x.js:3:10\n0x7f0000002000 0x10 py::f:/tmp/a.py\n"))
	f.Add([]byte("55d0c4a1b000 1a0 Interpreter\n55d0c4a1b0c0 20 stub\r\nbad line\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		syms, err := parsePerfMap(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range syms {
			if s.Size == 0 || s.Start+s.Size < s.Start || s.Name == "" {
				t.Fatalf("function %+v", s)
			}
			if i > 0 && syms[i-1].Start > s.Start {
				t.Fatal("not sorted")
			}
			if got, ok := lookupPerfSym(syms, s.Start); !ok || s.Start-got.Start >= got.Size {
				t.Fatalf("lookup(%#x) = %+v, %v", s.Start, got, ok)
			}
		}
	})
}
