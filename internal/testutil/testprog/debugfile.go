package testprog

import (
	"debug/elf"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildNames builds names.c (main → a → b → c → d, d looping) with
// debug information and the given flags into dir (a temporary directory
// when dir is "").
func BuildNames(t testing.TB, dir string, flags ...string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	return BuildIn(t, dir, "names", []string{"names.c"}, append([]string{"-g"}, flags...)...)
}

// BuildJIT builds jit.c, which writes /tmp/perf-PID.map for the code it
// generates.
func BuildJIT(t testing.TB) string {
	return Build(t, "jit", []string{"jit.c"}, "-O1")
}

// SplitDebug moves the symbols and debug information of the executable
// at path into path.debug, as distributions package them: objcopy
// --only-keep-debug, then strip --strip-all; with link set, a
// .gnu_debuglink to path.debug is added (with its CRC). It returns the
// debug file's path.
func SplitDebug(t testing.TB, path string, link bool) string {
	t.Helper()
	dbg := path + ".debug"
	run(t, "objcopy", "--only-keep-debug", path, dbg)
	run(t, "strip", "--strip-all", path)
	if link {
		cmd := exec.Command("objcopy", "--add-gnu-debuglink="+filepath.Base(dbg), path)
		cmd.Dir = filepath.Dir(path)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, out)
		}
	}
	return dbg
}

// BuildID returns the GNU build id of the ELF file at path, in hex.
func BuildID(t testing.TB, path string) string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		t.Fatalf("%s has no build id", path)
	}
	b, err := s.Data()
	if err != nil || len(b) < 16+2 {
		t.Fatalf("%s: build id note: %v", path, err)
	}
	return hex.EncodeToString(b[16:]) // after namesz, descsz, type and "GNU\0"
}

// InstallBuildID copies the debug file dbg to dir/.build-id/ab/cdef….debug
// for build id id, where gdb and dtrace look for it, and returns that
// path; the test's cleanup removes it.
func InstallBuildID(t testing.TB, dir, id, dbg string) string {
	t.Helper()
	p := filepath.Join(dir, ".build-id", id[:2], id[2:]+".debug")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dbg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(p) })
	return p
}

// AddMiniDebugInfo gives the stripped executable at path a
// .gnu_debugdata section made from its debug file dbg as Fedora's
// find-debuginfo makes it: the function symbols .dynsym lacks, kept by
// objcopy in an otherwise stripped copy, compressed by xz.
func AddMiniDebugInfo(t testing.TB, path, dbg string) {
	t.Helper()
	dynamic := map[string]bool{}
	if f, err := elf.Open(path); err == nil {
		syms, _ := f.DynamicSymbols()
		for _, s := range syms {
			dynamic[s.Name] = true
		}
		f.Close()
	}
	f, err := elf.Open(dbg)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var keep []byte
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF && !dynamic[s.Name] {
			keep = append(keep, s.Name+"\n"...)
		}
	}
	dir := t.TempDir()
	keepFile, mini := filepath.Join(dir, "keep"), filepath.Join(dir, "mini")
	if err := os.WriteFile(keepFile, keep, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, "objcopy", "-S", "--remove-section", ".gdb_index", "--remove-section", ".comment", "--keep-symbols="+keepFile, dbg, mini)
	run(t, "xz", mini)
	run(t, "objcopy", "--add-section", ".gnu_debugdata="+mini+".xz", path)
}

func run(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}
