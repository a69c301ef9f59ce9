//go:build linux

package dtrace

import (
	"bytes"
	"strings"
	"testing"
)

// varRows compiles src with -S and returns the rows of the variable
// tables it prints, each with its ID and RANGE columns dropped.
func varRows(t *testing.T, src string) []string {
	t.Helper()
	var stderr bytes.Buffer
	h := openTest(t, Config{Testing: true, Stderr: &stderr})
	h.opts.Verbose = true
	if _, err := h.Compile(Source{Name: "t", Text: src}); err != nil {
		t.Fatal(err)
	}
	var rows []string
	in := false
	for _, l := range strings.Split(stderr.String(), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) > 0 && f[0] == "NAME":
			in = true
		case len(f) == 0:
			in = false
		case in:
			// Columns: NAME 0-16, ID 17-21, OFFSET..SCP 22-36,
			// RANGE 37-48, FLAG and TYPE from 49.
			rows = append(rows, strings.Join(strings.Fields(l[:16]+" "+l[22:36]+" "+l[49:]), " "))
		}
	}
	return rows
}

// TestVarTable: -S lists each clause's variables with their offsets as
// laid out (each in its own size and alignment, declared ones whether
// used or not), kinds, scopes, accesses and types.
func TestVarTable(t *testing.T) {
	got := varRows(t, `
char c;
int unused;
short s;
this long l;
BEGIN {
	c = 1;
	s += 2;
	this->l = c;
	self->p = curthread;
	a[1] = s;
	trace(pid);
	exit(0);
}`)
	want := []string{
		"c 0 scl glb r/w D type (integer) (size 1)",
		"s 8 scl glb r/w D type (integer) (size 2)",
		"l 0 scl loc w D type (integer) (size 8)",
		"p 0 scl tls w D type (pointer) (size 8)",
		"curthread scl glb r D type (pointer) (size 8)",
		"a arr glb w D type (integer) (size 2)",
		"pid scl glb r D type (integer) (size 4)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("variable table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestNarrowGlobals: globals of 1, 2 and 4 bytes laid side by side keep
// their values (signed ones sign-extended), none overwriting another.
func TestNarrowGlobals(t *testing.T) {
	h := openTest(t, Config{Testing: true})
	h.opts.Quiet = true
	startTest(t, h, "narrow", `
char a; uchar_t b; short c; int d; char e; long f;
this char g; this int h;
BEGIN {
	a = -1; b = 255; c = -3; d = 70000; e = 'x'; f = -5;
	this->g = -7; this->h = 123456;
	printf("%d %d %d %d %c %d %d %d\n", a, b, c, d, e, f, this->g, this->h);
	exit(0);
}`)
	if got, want := strings.TrimRight(runOK(t, h), "\n")+"\n", "-1 255 -3 70000 x -5 -7 123456\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
