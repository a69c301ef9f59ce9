package dtrace

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/dof"
)

// sunwDOF reads the .SUNW_dof section of the ELF object at path.
func sunwDOF(t *testing.T, path string) ([]byte, *elf.File) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	s := f.Section(".SUNW_dof")
	if s == nil {
		t.Fatal("no .SUNW_dof section")
	}
	b, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	return b, f
}

// TestGenerateObjectDOF builds a C program with a dtrace -h header, runs
// -G over its object and decodes the DOF of the object -G writes: the
// providers, probes, argument types and, for each probe, its function
// and the offsets of its sites there, which must be the <sys/sdt.h>
// nops in the compiled code. The ELF object's .SUNW_dof section carries
// a relocation against main for main's probe; -x strip makes the DOF
// smaller; linktype=dof writes the same DOF raw.
func TestGenerateObjectDOF(t *testing.T) {
	cc, err := exec.LookPath("gcc")
	if err != nil || runtime.GOARCH != "amd64" {
		t.Skip("needs gcc, on amd64 (the sites must be x86 nops)")
	}
	t.Run("64", func(t *testing.T) { testGenerateObjectDOF(t, cc, false) })
	// gcc -m32 (gcc-multilib): notes relocated by REL entries, addends
	// in place.
	t.Run("32", func(t *testing.T) { testGenerateObjectDOF(t, cc, true) })
}

func testGenerateObjectDOF(t *testing.T, cc string, m32 bool) {
	dir := t.TempDir()
	prov := `provider test_prov {
	probe go();
	probe work__start(int a, char *b) : (char *b, int a);
	probe unused(void);
};
`
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	script := write("prov.d", prov)
	if err := GenerateHeader(script, filepath.Join(dir, "prov.h")); err != nil {
		t.Fatal(err)
	}
	write("test.c", `#include "prov.h"
static void __attribute__((noinline)) helper(int x) { TEST_PROV_WORK_START(x, "s"); TEST_PROV_WORK_START(x + 1, "t"); }
int main(int argc, char **argv)
{
	TEST_PROV_GO();
	helper(argc);
	return 0;
}
`)
	_, file, _, _ := runtime.Caller(0)
	inc := filepath.Join(filepath.Dir(file), "..", "include")
	args := []string{"-O1", "-I", inc, "-c", "-o", filepath.Join(dir, "test.o"), filepath.Join(dir, "test.c")}
	if m32 {
		args = append([]string{"-m32"}, args...)
	}
	cmd := exec.Command(cc, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		if m32 {
			t.Skipf("gcc -m32: %v: %s", err, out)
		}
		t.Fatalf("%v: %s", err, out)
	}
	obj := filepath.Join(dir, "test.o")

	gen := func(out string, set ...string) []byte {
		t.Helper()
		o := NewOptions()
		for _, s := range set {
			name, val, _ := strings.Cut(s, "=")
			if err := o.Set(name, val); err != nil {
				t.Fatal(err)
			}
		}
		var stderr bytes.Buffer
		if err := GenerateObject(script, out, []string{obj}, o, &stderr); err != nil {
			t.Fatalf("%v: %s", err, stderr.String())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	out := filepath.Join(dir, "prov.o")
	gen(out)
	data, ef := sunwDOF(t, out)
	d, err := dof.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	model := uint8(dof.ModelLP64)
	if m32 {
		model = dof.ModelILP32
	}
	if d.Model != model || d.Comment != APIVersion || len(d.UTSName) != 390 {
		t.Errorf("model %d comment %q utsname %d bytes", d.Model, d.Comment, len(d.UTSName))
	}
	if len(d.Providers) != 1 || d.Providers[0].Name != "test_prov" {
		t.Fatalf("providers %+v", d.Providers)
	}
	probes := map[string]dof.Probe{}
	for _, p := range d.Providers[0].Probes {
		probes[p.Name] = p
	}
	if len(probes) != 2 {
		t.Errorf("probes %+v, want go and work-start (unused has no site)", d.Providers[0].Probes)
	}
	g, w := probes["go"], probes["work-start"]
	if g.Func != "main" || len(g.Offs) != 1 || len(g.NArgs) != 0 {
		t.Errorf("go: %+v", g)
	}
	if w.Func != "helper" || len(w.Offs) != 2 ||
		strings.Join(w.NArgs, ",") != "int,char *" || strings.Join(w.XArgs, ",") != "char *,int" ||
		!bytes.Equal(w.Mapping, []byte{1, 0}) {
		t.Errorf("work-start: %+v", w)
	}

	// Each offset is a nop of the function in the compiled object.
	tf, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	syms, _ := tf.Symbols()
	for _, p := range []dof.Probe{g, w} {
		var fn *elf.Symbol
		for i := range syms {
			if syms[i].Name == p.Func && elf.ST_TYPE(syms[i].Info) == elf.STT_FUNC {
				fn = &syms[i]
			}
		}
		if fn == nil {
			t.Fatalf("no symbol %s", p.Func)
		}
		text, err := tf.Sections[fn.Section].Data()
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range p.Offs {
			if uint64(o) >= fn.Size || text[fn.Value+uint64(o)] != 0x90 {
				t.Errorf("%s: offset %#x in %s (size %#x) is not a nop", p.Name, o, p.Func, fn.Size)
			}
		}
	}

	// The relocation of go's dofpr_addr is an ELF one against main;
	// helper is static and stays unrelocated (named by the DOF's own).
	rels := map[string]bool{}
	for _, r := range d.Relocs {
		rels[r.Name] = true
	}
	if !rels["main"] || !rels["helper"] {
		t.Errorf("DOF relocations %+v", d.Relocs)
	}
	var relSec *elf.Section
	for _, s := range ef.Sections {
		if (s.Type == elf.SHT_RELA || s.Type == elf.SHT_REL) && ef.Sections[s.Info].Name == ".SUNW_dof" {
			relSec = s
		}
	}
	if relSec == nil {
		t.Fatal("no relocations of .SUNW_dof")
	}
	rb, _ := relSec.Data()
	esyms, _ := ef.Symbols()
	var off, sym uint64
	var typ uint32
	switch {
	case !m32 && len(rb) == 24: // one Elf64_Rela
		off, sym, typ = ef.ByteOrder.Uint64(rb), ef.ByteOrder.Uint64(rb[8:])>>32, uint32(ef.ByteOrder.Uint64(rb[8:]))
		if elf.R_X86_64(typ) != elf.R_X86_64_64 {
			t.Errorf("relocation type %d", typ)
		}
	case m32 && len(rb) == 8: // one Elf32_Rel
		off, sym, typ = uint64(ef.ByteOrder.Uint32(rb)), uint64(ef.ByteOrder.Uint32(rb[4:])>>8), ef.ByteOrder.Uint32(rb[4:])&0xff
		if elf.R_386(typ) != elf.R_386_32 {
			t.Errorf("relocation type %d", typ)
		}
	default:
		t.Fatalf("%d bytes of relocations, want one", len(rb))
	}
	if sym == 0 || esyms[sym-1].Name != "main" {
		t.Errorf("relocation against symbol %d", sym)
	}
	var mainRel dof.Reloc
	for _, r := range d.Relocs {
		if r.Name == "main" {
			mainRel = r
		}
	}
	if off != mainRel.Offset {
		t.Errorf("ELF relocation at %#x, DOF's at %#x", off, mainRel.Offset)
	}

	// strip: smaller, same providers.
	sout := filepath.Join(dir, "stripped.o")
	gen(sout, "strip")
	sdata, _ := sunwDOF(t, sout)
	if len(sdata) >= len(data) {
		t.Errorf("stripped DOF %d bytes, default %d", len(sdata), len(data))
	}
	sd, err := dof.Decode(sdata)
	if err != nil {
		t.Fatal(err)
	}
	if sd.Comment != "" || sd.UTSName != nil || len(sd.Providers) != 1 || len(sd.Providers[0].Probes) != 2 {
		t.Errorf("stripped: %+v", sd)
	}

	// linktype=dof: the DOF itself, not ELF.
	rout := filepath.Join(dir, "raw.out")
	raw := gen(rout, "linktype=dof")
	if _, err := elf.Open(rout); err == nil {
		t.Error("linktype=dof wrote an ELF file")
	}
	rd, err := dof.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.Providers) != 1 || len(rd.Providers[0].Probes) != 2 || len(raw) != len(data) {
		t.Errorf("raw DOF %d bytes, %+v", len(raw), rd.Providers)
	}
}
