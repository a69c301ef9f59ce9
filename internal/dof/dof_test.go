package dof

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

func testProviders() []Provider {
	a := Attr{StabEvolving, StabEvolving, ClassCommon}
	return []Provider{{
		Name: "myprov", ProvAttr: a, ModAttr: Attr{StabPrivate, StabPrivate, ClassUnknown}, FuncAttr: a, NameAttr: a, ArgsAttr: a,
		Probes: []Probe{
			{Name: "work-start", Func: "main", NArgs: []string{"int", "char *"}, XArgs: []string{"char *", "int"},
				Mapping: []uint8{1, 0}, Offs: []uint32{0x10, 0x24}, EnOffs: []uint32{0x8}},
			{Name: "done", Func: "helper", Offs: []uint32{4}},
		},
	}, {
		Name: "other", Probes: []Probe{{Name: "tick", Func: "loop", NArgs: []string{"long"}, XArgs: []string{"long"}, Mapping: []uint8{0}, Offs: []uint32{7}}},
	}}
}

func TestRoundTrip(t *testing.T) {
	provs := testProviders()
	uts := bytes.Repeat([]byte{'u'}, 390)
	b, relocs, err := Encode(provs, Options{LP64: true, Comment: "Oracle D 2.0", UTSName: uts})
	if err != nil {
		t.Fatal(err)
	}
	// The header, read by hand.
	if string(b[:4]) != "\x7fDOF" || b[4] != ModelLP64 || b[5] != EncodeLSB || b[6] != Version2 || b[7] != 2 || b[8] != 8 || b[9] != 8 {
		t.Fatalf("ident % x", b[:16])
	}
	le := binary.LittleEndian
	if hs, ss := le.Uint32(b[20:]), le.Uint32(b[24:]); hs != 64 || ss != 32 {
		t.Errorf("hdrsize %d secsize %d", hs, ss)
	}
	if fs := le.Uint64(b[48:]); fs != uint64(len(b)) {
		t.Errorf("filesz %d, len %d", fs, len(b))
	}
	f, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	// Loadable sections end at loadsz; the comment and utsname follow.
	for i, s := range f.Sections {
		load := s.Flags&SecfLoad != 0
		if load != (s.Offset+s.Size <= f.LoadSize) || (load && s.Align > 1 && s.Offset%uint64(s.Align) != 0) {
			t.Errorf("section %d %+v, loadsz %d", i, s, f.LoadSize)
		}
		if (s.Type == SectComments || s.Type == SectUTSName) == load {
			t.Errorf("section %d type %d loadable %v", i, s.Type, load)
		}
	}
	if f.Comment != "Oracle D 2.0" || !bytes.Equal(f.UTSName, uts) {
		t.Errorf("comment %q utsname %d bytes", f.Comment, len(f.UTSName))
	}
	if !reflect.DeepEqual(f.Providers, provs) {
		t.Errorf("decoded\n%+v\nwant\n%+v", f.Providers, provs)
	}
	// One relocation per probe, naming its function, at its dofpr_addr.
	if !reflect.DeepEqual(f.Relocs, relocs) || len(relocs) != 3 {
		t.Fatalf("relocs %+v, decoded %+v", relocs, f.Relocs)
	}
	for i, fn := range []string{"main", "helper", "loop"} {
		r := relocs[i]
		if r.Name != fn {
			t.Errorf("reloc %d names %s, want %s", i, r.Name, fn)
		}
		// dofpr_func is the 4 bytes after dofpr_addr; the probe's
		// function read through it must be the one named.
		var probes Section
		for _, s := range f.Sections {
			if s.Type == SectProbes && r.Offset >= s.Offset && r.Offset < s.Offset+s.Size {
				probes = s
			}
		}
		if probes.Size == 0 || (r.Offset-probes.Offset)%ProbeSize != 0 {
			t.Errorf("reloc %d at %d is not a probe's dofpr_addr", i, r.Offset)
		}
	}
	// Is-enabled offsets need the PRENOFFS section, only where a probe has some.
	n := 0
	for _, s := range f.Sections {
		if s.Type == SectPrEnOffs {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d PRENOFFS sections, want 1", n)
	}
}

func TestStripIsSmaller(t *testing.T) {
	opt := Options{LP64: true, Comment: "Oracle D 2.0", UTSName: make([]byte, 390)}
	full, _, err := Encode(testProviders(), opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Strip = true
	stripped, _, err := Encode(testProviders(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(stripped) >= len(full) {
		t.Fatalf("stripped %d bytes, full %d", len(stripped), len(full))
	}
	f, err := Decode(stripped)
	if err != nil {
		t.Fatal(err)
	}
	if f.LoadSize != f.FileSize || f.Comment != "" || f.UTSName != nil {
		t.Errorf("stripped: loadsz %d filesz %d comment %q", f.LoadSize, f.FileSize, f.Comment)
	}
	if bytes.Contains(stripped, []byte("Oracle D")) {
		t.Error("stripped DOF holds the comment")
	}
	g, _ := Decode(full)
	if !reflect.DeepEqual(f.Providers, g.Providers) {
		t.Error("strip changed the providers")
	}
}

func TestEncodeRefuses(t *testing.T) {
	bad := []Provider{{Name: "p", Probes: []Probe{{Name: "x", Func: "f", NArgs: []string{"int"}, XArgs: []string{"int"}, Mapping: []uint8{1}}}}}
	if _, _, err := Encode(bad, Options{}); err == nil {
		t.Error("mapping to a missing native argument accepted")
	}
	bad[0].Probes[0].Mapping = nil
	if _, _, err := Encode(bad, Options{}); err == nil {
		t.Error("missing mapping accepted")
	}
}

func TestDecodeRefuses(t *testing.T) {
	b, _, err := Encode(testProviders(), Options{LP64: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func([]byte) []byte{
		"magic":     func(b []byte) []byte { b[1] = 'X'; return b },
		"truncated": func(b []byte) []byte { return b[:len(b)-1] },
		"section":   func(b []byte) []byte { binary.LittleEndian.PutUint64(b[64+16:], 1<<40); return b },
	} {
		c := mut(append([]byte(nil), b...))
		if _, err := Decode(c); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
