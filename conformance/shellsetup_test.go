package conformance

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestUtilsFixedAddress: the programs of test/utils are linked at a
// fixed address, as Oracle Linux's gcc links them, so that the user PCs
// dtrace reports are the addresses objdump prints (cpc/tst.args_user).
func TestUtilsFixedAddress(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	corpus := t.TempDir()
	files := map[string]string{
		"test/unittest/x/tst.x.sh": "exit 0\n",
		"test/triggers/Build":      "",
		"test/utils/Build":         "TEST_UTILS = work\n",
		"test/utils/work.c":        "int main(void) { return 0; }\n",
	}
	for name, text := range files {
		p := filepath.Join(corpus, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh, err := PrepareShell(t.Context(), ShellOptions{Tmp: t.TempDir(), Corpus: corpus, DTrace: "/bin/true", Arch: "x86_64"})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	name := "test/utils/work"
	if err := sh.BuildErrors[name]; err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	f, err := elf.Open(filepath.Join(sh.Root, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC {
		t.Errorf("%s: ELF type %v, want %v", name, f.Type, elf.ET_EXEC)
	}
}

// TestShellScriptTriggers: our shell-script triggers are installed
// executable in test/triggers, but for the names the corpus has.
func TestShellScriptTriggers(t *testing.T) {
	corpus := t.TempDir()
	ours := t.TempDir()
	files := map[string]string{
		corpus + "/test/unittest/x/tst.x.sh": "exit 0\n",
		corpus + "/test/triggers/Build":      "",
		corpus + "/test/triggers/theirs.sh":  "echo corpus\n",
		corpus + "/test/utils/Build":         "",
		ours + "/mine.sh":                    "echo ours\n",
		ours + "/theirs.sh":                  "echo ours\n",
		ours + "/prog.c":                     "int main(void) { return 0; }\n",
	}
	for p, text := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh, err := PrepareShell(t.Context(), ShellOptions{Tmp: t.TempDir(), Corpus: corpus, DTrace: "/bin/true", Arch: "x86_64", Triggers: ours})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	dir := filepath.Join(sh.Root, "test", "triggers")
	for name, want := range map[string]string{"mine.sh": "echo ours\n", "theirs.sh": "echo corpus\n"} {
		p := filepath.Join(dir, name)
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if name == "mine.sh" && st.Mode()&0o111 == 0 {
			t.Errorf("%s: mode %v, not executable", name, st.Mode())
		}
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "prog.c")); err == nil {
		t.Errorf("prog.c installed in test/triggers")
	}
}
