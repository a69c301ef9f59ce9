package conformance

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestInterpreterFile checks the handling of "#!dtrace" tests as
// runtest.sh's: recognised by the first word only, copied executable with
// the #! naming the binary under test, and run with the raw flags only.
func TestInterpreterFile(t *testing.T) {
	if !isInterpreterFile([]byte("#!dtrace -qs\n\nBEGIN { exit(0); }\n")) {
		t.Error("#!dtrace -qs not an interpreter file")
	}
	for _, text := range []string{"/* #!dtrace */\n", "#!/usr/sbin/dtrace -s\n", "BEGIN {}\n#!dtrace -s\n"} {
		if isInterpreterFile([]byte(text)) {
			t.Errorf("%q taken for an interpreter file", text)
		}
	}
	path, err := writeInterpreterFile("/opt/bin/dtrace", []byte("#!dtrace -qs\nBEGIN { exit(0); }\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "#!/opt/bin/dtrace -qs\nBEGIN { exit(0); }\n"; string(b) != want {
		t.Errorf("copy holds %q, want %q", b, want)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Errorf("copy not executable: %v %v", st.Mode(), err)
	}
	args := withoutScript([]string{"-xerrtags", "-DARCH_x86_64", "-s", "test/a.d", "-q"}, "test/a.d")
	if want := []string{"-xerrtags", "-DARCH_x86_64", "-q"}; !slices.Equal(args, want) {
		t.Errorf("raw flags %q, want %q", strings.Join(args, " "), strings.Join(want, " "))
	}
}
