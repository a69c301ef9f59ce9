package conformance

import (
	"reflect"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"addr 0xffff8880deadbeef here\n", "addr {ptr} here\n"},
		{"0x0 0xAB\n", "{ptr} 0xAB\n"}, // upper-case hex is not a pointer
		{"dtrace: error in dt_clause_0 for probe ID 1 (dtrace:::BEGIN): invalid address (0x0) at BPF pc 123\n",
			"dtrace: error in dt_clause_0 for probe ID 1 (dtrace:::BEGIN): invalid address ({ptr}) at BPF pc NNN\n"},
		{"==123== 0x1234 valgrind\n", "==123== 0x1234 valgrind\n"},
		{"no newline 0x1", "no newline {ptr}"},
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		expected, actual string
		nosort           bool
		ok               bool
	}{
		{"a\nb\n", "b\na\n", false, true},
		{"a\nb\n", "b\na\n", true, false},
		{"a\nb\n", "a\nb", true, true}, // a missing final newline is not a difference
		{"x 0x10\n", "x 0xffff\n", false, true},
		{"a \n", "a\n", false, false}, // trailing blanks count
		{"", "", false, true},
		{"a\n", "a\na\n", false, false},
	}
	for _, tt := range tests {
		ok, diff := Compare(tt.expected, tt.actual, tt.nosort)
		if ok != tt.ok {
			t.Errorf("Compare(%q, %q, %v) = %v (%s), want %v", tt.expected, tt.actual, tt.nosort, ok, diff, tt.ok)
		}
		if !ok && diff == "" {
			t.Errorf("Compare(%q, %q): no diff for a mismatch", tt.expected, tt.actual)
		}
	}
}

func TestCombine(t *testing.T) {
	tests := []struct{ stdout, stderr, want string }{
		{"out\n", "", "out\n"},
		{"", "dtrace: oops\n", "-- @@stderr --\ndtrace: oops\n"},
		{"out\n", "libdtrace DEBUG 123: noise\ndtrace: oops\n", "out\n-- @@stderr --\ndtrace: oops\n"},
		{"partial", "err\n", "partial-- @@stderr --\nerr\n"},
		{"out\n", "libdtrace DEBUG 1: only noise\n", "out\n"},
	}
	for _, tt := range tests {
		if got := Combine(tt.stdout, tt.stderr); got != tt.want {
			t.Errorf("Combine(%q, %q) = %q, want %q", tt.stdout, tt.stderr, got, tt.want)
		}
	}
}

func TestDiff(t *testing.T) {
	d := Diff([]string{"a", "b", "c"}, []string{"a", "x", "c"})
	if !strings.Contains(d, `-"b"`) || !strings.Contains(d, `+"x"`) {
		t.Errorf("Diff = %q", d)
	}
}

func TestAnnotation(t *testing.T) {
	text := `/*
 * @@runtest-opts: -C -x noresolve*/
/* @@trigger-timing: before */
/* @@trigger: pid-tst-args1 */
/* @@nosort */
/* @@timeout: 15 */
/* @@xfail: not yet */
`
	tests := []struct {
		name, want string
		ok         bool
	}{
		{"runtest-opts", "-C -x noresolve", true},
		{"trigger", "pid-tst-args1", true},
		{"trigger-timing", "before", true},
		{"nosort", "", true},
		{"timeout", "15", true},
		{"xfail", "not yet", true},
		{"skip", "", false},
		{"time", "", false},
	}
	for _, tt := range tests {
		got, ok := Annotation(text, tt.name)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Annotation(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"-C -I test/utils", []string{"-C", "-I", "test/utils"}},
		{"-- -e -e", []string{"--", "-e", "-e"}},
		{`-n 'BEGIN { exit(0); }' "a b"`, []string{"-n", "BEGIN { exit(0); }", "a b"}},
		{"", nil},
	}
	for _, tt := range tests {
		got, err := SplitWords(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := SplitWords("'open"); err == nil {
		t.Errorf("unterminated quote accepted")
	}
}

func TestCommand(t *testing.T) {
	tests := []struct {
		test    Test
		trigger string
		pid     int
		want    string
	}{
		{Test{Path: "test/unittest/a/tst.x.d", Kind: KindTst}, "", 0,
			"-DARCH_x86_64 -s test/unittest/a/tst.x.d"},
		{Test{Path: "test/unittest/a/err.D_SYNTAX.x.d", Kind: KindErr, Tag: "D_SYNTAX", RuntestOpts: "-C"}, "", 0,
			"-xerrtags -DARCH_x86_64 -s test/unittest/a/err.D_SYNTAX.x.d -C"},
		{Test{Path: "test/unittest/drops/drp.DTRACEDROP_SPEC.d", Kind: KindDrp, Tag: "DTRACEDROP_SPEC"}, "", 0,
			"-xdroptags -DARCH_x86_64 -s test/unittest/drops/drp.DTRACEDROP_SPEC.d"},
		{Test{Path: "test/unittest/p/tst.y.d", Kind: KindTst, RuntestOpts: "$_pid"}, "", 4242,
			"-DARCH_x86_64 -s test/unittest/p/tst.y.d 4242"},
		{Test{Path: "test/unittest/p/tst.z.d", Kind: KindTst}, "/t/bogus-ioctl", 0,
			"-DARCH_x86_64 -c /t/bogus-ioctl -s test/unittest/p/tst.z.d"},
	}
	for _, tt := range tests {
		args, err := Command(&tt.test, "x86_64", tt.trigger, tt.pid)
		if got := strings.Join(args, " "); err != nil || got != tt.want {
			t.Errorf("Command(%s) = %q, %v; want %q", tt.test.Path, got, err, tt.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	mk := func(name string, st Status) *Result {
		return &Result{Test: &Test{Name: name, Dir: name[:strings.Index(name, "/")]}, Status: st}
	}
	results := []*Result{
		mk("a/tst.1", Pass), mk("a/tst.2", Fail), mk("b/tst.3", Fail), mk("b/tst.4", Skip), mk("b/tst.5", Pass),
	}
	xf := ExpectedFailures{"a/tst.2": "known", "b/tst.5": "was broken"}
	s := Summarize(results, xf)
	if s.Passed != 2 || s.Failed != 2 || s.Skipped != 1 || s.Expected != 1 {
		t.Errorf("counts %+v", s)
	}
	if len(s.Unexpected) != 1 || s.Unexpected[0].Test.Name != "b/tst.3" || s.OK() {
		t.Errorf("unexpected %v", s.Unexpected)
	}
	if len(s.NowPassing) != 1 || s.NowPassing[0].Test.Name != "b/tst.5" {
		t.Errorf("now passing %v", s.NowPassing)
	}
	var b strings.Builder
	s.Write(&b)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; last != "2 passed, 2 failed" {
		t.Errorf("closing line %q", last)
	}

	nw := UpdateExpectedFailures(xf, results)
	if _, ok := nw["b/tst.3"]; !ok || nw["a/tst.2"] != "" {
		t.Errorf("updated list %v", nw)
	}
	if _, ok := nw["b/tst.5"]; ok {
		t.Errorf("passing test kept in list")
	}
}
