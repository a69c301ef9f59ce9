package unwind

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dtrace-go/dtrace/symbol"
)

// TestDebugFileGaps: a program built without unwind tables keeps the CFI
// of its own functions only in .debug_frame; stripped, with that section
// in a debug file beside it (found by its .gnu_debuglink), its .eh_frame
// still covers crt's _start and the PLT. The table covers its functions
// from the debug file's .debug_frame, in the gaps of its .eh_frame.
func TestDebugFileGaps(t *testing.T) {
	for _, tool := range []string{"gcc", "objcopy", "strip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(err)
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "gap.c")
	exe := filepath.Join(dir, "gap")
	code := "volatile int s;\n__attribute__((noinline)) void f(int n) { for (int i = 0; i < n; i++) s += i; }\n" +
		"int main(int c, char **v) { (void)v; f(c); return s; }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{
		{"gcc", "-O2", "-g", "-fno-asynchronous-unwind-tables", "-Wl,--build-id=none", "-o", exe, src},
		{"objcopy", "--only-keep-debug", exe, exe + ".debug"},
		{"strip", "--strip-debug", "--strip-unneeded", exe},
		{"objcopy", "--add-gnu-debuglink=" + exe + ".debug", exe},
	} {
		if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, out)
		}
	}
	// f's address, from the debug file's symbols.
	df := openELF(t, exe+".debug")
	syms, err := df.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var fAddr uint64
	for _, s := range syms {
		if s.Name == "f" && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			fAddr = s.Value
		}
	}
	f := openELF(t, exe)
	if f.Section(".eh_frame") == nil || f.Section(".debug_frame") != nil || fAddr == 0 {
		t.Fatalf("gap: .eh_frame %v, .debug_frame %v, f at %#x: not the object this test needs",
			f.Section(".eh_frame") != nil, f.Section(".debug_frame") != nil, fAddr)
	}
	seg, ok := segmentOf(execSegments(f), fAddr)
	if !ok {
		t.Fatalf("f at %#x is in no executable segment", fAddr)
	}
	off := fAddr - seg.vaddr + seg.off
	alone, err := Build(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := alone.Lookup(off); ok && r.CFA != CFANone {
		t.Fatalf("f has a rule without its debug file: %v", r)
	}
	if p := symbol.LocalDebugFile(exe); p != exe+".debug" {
		t.Fatalf("LocalDebugFile(%s) = %q, want %s.debug", exe, p, exe)
	}
	both, err := BuildObject(f, exe)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := both.Lookup(off); !ok || r.CFA != CFARSP || r.CFAOff != 8 {
		t.Errorf("f's first byte: %v (found %v), want cfa=rsp+8", r, ok)
	}
	if both.FDEs <= alone.FDEs {
		t.Errorf("%d FDEs with the debug file, %d without", both.FDEs, alone.FDEs)
	}
	t.Logf("%d FDEs from .eh_frame, %d with the debug file's .debug_frame", alone.FDEs, both.FDEs)
}
