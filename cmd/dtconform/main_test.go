package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun drives dtconform over a two-test corpus with a fake dtrace: the
// closing line, the exit status with and without an expected-failures
// entry, and -update-xfail.
func TestRun(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "dtrace-utils")
	unit := filepath.Join(root, "test", "unittest", "x")
	if err := os.MkdirAll(unit, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"tst.good.d": "", "tst.good.r": "ok\n",
		"tst.bad.d": "", "tst.bad.r": "ok\n",
	} {
		if err := os.WriteFile(filepath.Join(unit, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fake := filepath.Join(top, "fake-dtrace")
	script := "#!/bin/sh\ncase \"$*\" in *tst.good.d*) echo ok;; *) echo nope;; esac\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	xfail := filepath.Join(top, "xfail.txt")

	tests := []struct {
		name   string
		args   []string
		status int
		last   string
	}{
		{"unexpected failure", nil, 1, "1 passed, 1 failed"},
		{"update", []string{"-update-xfail"}, 0, "1 passed, 1 failed"},
		{"listed failure", nil, 0, "1 passed, 1 failed"},
		{"filtered", []string{"-run", "good"}, 0, "1 passed, 0 failed"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		args := append([]string{"-dtrace", fake, "-corpus", root, "-xfail", xfail, "-triggers", top}, tt.args...)
		status := run(args, &stdout, &stderr)
		lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
		if status != tt.status || lines[len(lines)-1] != tt.last {
			t.Errorf("%s: status %d, last line %q; want %d, %q\nstdout:\n%s\nstderr:\n%s",
				tt.name, status, lines[len(lines)-1], tt.status, tt.last, stdout.String(), stderr.String())
		}
	}
	data, err := os.ReadFile(xfail)
	if err != nil || !strings.Contains(string(data), "x/tst.bad") || strings.Contains(string(data), "x/tst.good") {
		t.Errorf("expected-failures file: %v\n%s", err, data)
	}
}
