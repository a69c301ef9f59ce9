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
	also := filepath.Join(top, "xfail-guest.txt")
	if err := os.WriteFile(also, []byte("x/tst.bad  # fails in the guest only\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		args   []string
		status int
		last   string
	}{
		{"unexpected failure", nil, 1, "1 passed, 1 failed"},
		{"listed by -xfail-also", []string{"-xfail-also", also}, 0, "1 passed, 1 failed"},
		{"-xfail-also missing", []string{"-xfail-also", also + ".none"}, 2, ""},
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

// TestTraces: which dtrace command lines the -oformat json wrapper runs
// with -x oformat=json.
func TestTraces(t *testing.T) {
	for _, tt := range []struct {
		args string
		want bool
	}{
		{"-n BEGIN", true},
		{"-qs x.d a b", true},
		{"-l -n BEGIN", false},
		{"-lvn BEGIN", false},
		{"-V", false},
		{"-e -s x.d", false},
		{"-o out -n BEGIN", false},
		{"-n -l", true},         // -l is -n's argument
		{"-xquiet -s -e", true}, // and -e is -s's
		{"-h -s p.d", false},
	} {
		if got := traces(strings.Fields(tt.args)); got != tt.want {
			t.Errorf("traces(%q) = %v, want %v", tt.args, got, tt.want)
		}
	}
}

// TestJSONReport checks kept runs against a small schema: valid objects
// count, invalid lines are reported, and the cut last line of a killed
// run is not.
func TestJSONReport(t *testing.T) {
	dir := t.TempDir()
	schema := filepath.Join(dir, "s.json")
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("s.json", `{"type": "object", "required": ["type"], "properties": {"type": {"enum": ["probe"]}}}`)
	write("run-1.meta", `{"test": "/c/test/unittest/a/tst.a.d", "args": ["-n", "BEGIN"]}`)
	write("run-1.out", "{\"type\":\"probe\"}\n{\"type\":\"probe\"}\n")
	write("run-2.meta", `{"test": "/c/test/unittest/a/tst.b.d", "args": [], "signaled": true}`)
	write("run-2.out", "{\"type\":\"probe\"}\n{\"type\":\"pr")
	var out bytes.Buffer
	if ok, err := jsonReport(&out, dir, schema); err != nil || !ok {
		t.Fatalf("valid runs: ok %v, err %v\n%s", ok, err, out.String())
	}
	if !strings.Contains(out.String(), "json: 2 dtrace runs, 3 objects valid (probe 3), 0 lines invalid, 0 lines of -c commands not checked") {
		t.Errorf("summary:\n%s", out.String())
	}
	write("run-3.meta", `{"test": "/c/test/unittest/a/tst.c.d", "args": []}`)
	write("run-4.meta", `{"test": "/c/test/unittest/a/tst.d.d", "args": ["-c", "date"]}`)
	write("run-4.out", "Wed Nov 25\n{\"type\":\"probe\"}\n{\"type\":\"x\"}\n")
	write("run-3.out", "{\"type\":\"text\"}\nplain text\n{\"type\":\"probe\"}")
	out.Reset()
	if ok, err := jsonReport(&out, dir, schema); err != nil || ok {
		t.Fatalf("invalid runs: ok %v, err %v\n%s", ok, err, out.String())
	}
	if n := strings.Count(out.String(), "invalid: a/tst.c.d"); n != 2 || !strings.Contains(out.String(), "invalid: a/tst.d.d") ||
		!strings.Contains(out.String(), "5 objects valid (probe 5), 3 lines invalid, 1 lines of -c commands not checked") {
		t.Errorf("%d invalid lines of tst.c.d reported:\n%s", n, out.String())
	}
}
