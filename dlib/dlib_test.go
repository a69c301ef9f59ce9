package dlib

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
)

// Every file parses, and the order puts each after its dependencies.
func TestSourcesParse(t *testing.T) {
	seen := map[string]bool{}
	fset := syntax.NewFileSet()
	typedefs, idents := map[string]bool{}, map[string]bool{}
	pc := &syntax.Config{IsTypeName: func(n string) bool { return typedefs[n] }}
	for _, src := range Sources() {
		// Kernel typedefs the files name: with no kernel at hand, every
		// name the parser asks about that is not a library inline is one.
		pc.IsTypeName = func(n string) bool { return typedefs[n] || kernelTypedefs[n] }
		prog, err := pc.Parse(fset, src.Name, []byte(src.Text))
		if err != nil {
			t.Errorf("%s: %v", src.Name, err)
			continue
		}
		for _, d := range dependencies(prog) {
			if !seen[d] {
				t.Errorf("%s depends on %s, which does not come before it", src.Name, d)
			}
		}
		declared(prog, typedefs, idents)
		seen[src.Name] = true
	}
	for _, name := range []string{"psinfo_t", "lwpsinfo_t", "cpuinfo_t", "ipinfo_t", "bufinfo_t", "fileinfo_t", "tcpsinfo_t"} {
		if !typedefs[name] {
			t.Errorf("the library does not declare type %s", name)
		}
	}
	for _, name := range []string{"EPERM", "SIGKILL", "R_PC", "DTRACEFLT_BADADDR", "curpsinfo", "curlwpsinfo", "cpu", "ARPHRD_ETHER", "fds"} {
		if !idents[name] {
			t.Errorf("the library does not define %s", name)
		}
	}
}

// kernelTypedefs are the kernel typedefs the library's files use.
var kernelTypedefs = map[string]bool{
	"time64_t": true, "uid_t": true, "__be32": true, "dev_t": true, "loff_t": true,
}

// A file that does not check is dropped with the files that depend on
// it; the others stay, and the names of dropped files are not type names.
func TestLoadDrops(t *testing.T) {
	srcs := []Source{
		{"a.d", "inline int A = 1;\ntypedef struct a { int x; } a_t;\n"},
		{"b.d", "typedef int b_t;\ninline int B = ((a_t *)0)->nosuch;\n"},
		{"c.d", "#pragma D depends_on library b.d\ninline int C = 3;\n"},
		{"d.d", "#pragma D depends_on library a.d\ninline a_t *D = (a_t *)0;\n"},
		{"e.d", "inline int E = ;\n"},
	}
	lib := load(syntax.NewFileSet(), &check.Config{}, nil, srcs)
	if got := strings.Join(lib.Names, " "); got != "a.d d.d" {
		t.Errorf("loaded %s, want a.d d.d", got)
	}
	var why []string
	for _, err := range lib.Dropped {
		why = append(why, err.Error())
	}
	for _, want := range []string{"e.d: ", "b.d: ", "c.d: depends on library b.d"} {
		found := false
		for _, w := range why {
			found = found || strings.HasPrefix(w, want)
		}
		if !found {
			t.Errorf("no reason starting %q among %q", want, why)
		}
	}
	if !lib.IsTypeName("a_t") || !lib.IsTypeName("D`a_t") || lib.IsTypeName("C`a_t") || lib.IsTypeName("b_t") || !lib.IsIdent("D") || lib.IsIdent("B") {
		t.Error("names of loaded and dropped files mixed up")
	}
}

// Every embedded file parses, those of other architectures included.
func TestEveryFileParses(t *testing.T) {
	entries, err := files.ReadDir("d")
	if err != nil {
		t.Fatal(err)
	}
	// Type names declared anywhere in the library, and the kernel's.
	typedefs, idents := map[string]bool{}, map[string]bool{}
	for _, src := range Sources() {
		pc := &syntax.Config{IsTypeName: func(n string) bool { return typedefs[n] || kernelTypedefs[n] }}
		if p, err := pc.Parse(syntax.NewFileSet(), src.Name, []byte(src.Text)); err == nil {
			declared(p, typedefs, idents)
		}
	}
	pc := &syntax.Config{IsTypeName: func(n string) bool { return typedefs[n] || kernelTypedefs[n] }}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".d") {
			continue
		}
		text, err := readFile(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pc.Parse(syntax.NewFileSet(), e.Name(), []byte(text)); err != nil {
			t.Errorf("%s: %v", e.Name(), err)
		}
	}
}

// Order puts dependencies first, keeps the order otherwise, and
// survives cycles; the system library is already in order.
func TestOrder(t *testing.T) {
	srcs := []Source{
		{"c.d", "#pragma D depends_on library b.d\n"},
		{"a.d", ""},
		{"b.d", "#pragma D depends_on library a.d\n#pragma D depends_on library procfs.d\n"},
		{"x.d", "#pragma D depends_on library y.d\n"},
		{"y.d", "#pragma D depends_on library x.d\n"},
	}
	var got []string
	for _, s := range Order(srcs) {
		got = append(got, s.Name)
	}
	if strings.Join(got, " ") != "a.d b.d c.d y.d x.d" {
		t.Errorf("Order: %v, want a.d b.d c.d y.d x.d", got)
	}
	sys := Sources()
	for i, s := range Order(sys) {
		if s.Name != sys[i].Name {
			t.Fatalf("Order changes the system library's order at %d: %s, want %s", i, s.Name, sys[i].Name)
		}
	}
}

// User library files may use the system library's names.
func TestLoadSources(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mine.d"), []byte("#pragma D depends_on library errno.d\ninline int MY_ERR = EPERM + 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	extra, err := ReadDir(dir)
	if err != nil || len(extra) != 1 || extra[0].Name != "mine.d" {
		t.Fatalf("ReadDir: %v %v", extra, err)
	}
	srcs := append([]Source{extra[0]}, Sources()[:1]...) // mine.d before errno.d
	lib := LoadSources(syntax.NewFileSet(), &check.Config{}, nil, srcs)
	if strings.Join(lib.Names, " ") != "errno.d mine.d" || !lib.IsIdent("MY_ERR") {
		t.Errorf("loaded %v (dropped %v), want errno.d mine.d", lib.Names, lib.Dropped)
	}
}

// The edits for other architectures apply to text that is there.
func TestArchEdits(t *testing.T) {
	for arch, byFile := range archEdits {
		for name, edits := range byFile {
			text, err := readFile(name)
			if err != nil {
				t.Errorf("%s: %s: %v", arch, name, err)
				continue
			}
			for _, e := range edits {
				if !strings.Contains(text, e[0]) {
					t.Errorf("%s: %s has no %q to replace", arch, name, e[0])
				}
			}
		}
	}
}

// Every section of constants.tab is written into its file, once; the
// declarations keep their comments; a missing section is an error.
func TestConstants(t *testing.T) {
	tab, err := files.ReadFile("d/constants.tab")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, line := range strings.Split(string(tab), "\n") {
		if strings.HasPrefix(line, "[") {
			f := strings.Fields(strings.Trim(line, "[]"))
			want[f[0]+" "+f[1]] = true
		}
	}
	entries, err := files.ReadDir("d")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := files.ReadFile("d/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if n, ok := strings.CutPrefix(line, "/* constants: "); ok {
				key := strings.TrimSuffix(n, " */")
				if !want[key] {
					t.Errorf("%s: %q names no section, or one used before", e.Name(), line)
				}
				delete(want, key)
			}
		}
	}
	for key := range want {
		t.Errorf("section [%s] is used by no file", key)
	}
	errno, err := readFile("errno.d")
	if err != nil || !strings.Contains(errno, "\ninline int EPERM = 1;\n") ||
		!strings.Contains(errno, "\ninline int EWOULDBLOCK = 11;\t/* same as EAGAIN */\n") || strings.Contains(errno, "/* constants:") {
		t.Errorf("errno.d reads %q (%v)", errno, err)
	}
	if _, err := expandConstants("x.d", "/* constants: x.d 1 */\n", "[x.d 2 int]\nA 1\n"); err == nil {
		t.Error("a missing section expanded")
	}
}
