package conformance

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// writeCorpus lays out a miniature corpus in a temporary directory and
// returns its dtrace-utils root.
func writeCorpus(t *testing.T, files map[string]string) string {
	t.Helper()
	top := t.TempDir()
	root := filepath.Join(top, "dtrace-utils")
	for name, text := range files {
		p := filepath.Join(root, name)
		if name == "postprocessed.txt" {
			p = filepath.Join(top, name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestDiscover(t *testing.T) {
	root := writeCorpus(t, map[string]string{
		"test/unittest/pre/test.options":            "@@runtest-opts: -C\n",
		"test/unittest/pre/tst.a.d":                 "BEGIN {}\n",
		"test/unittest/pre/tst.a.r":                 "x\n",
		"test/unittest/pre/tst.b.d":                 "/* @@runtest-opts: -qC */\n/* @@nosort */\n",
		"test/unittest/pre/tst.b.r":                 "generic\n",
		"test/unittest/pre/tst.b.x86_64.r":          "x86\n",
		"test/unittest/pre/err.D_SYNTAX.c.d":        "/* @@timeout: 15 */\n",
		"test/unittest/pre/helper.d":                "not a test\n",
		"test/unittest/drops/drp.DTRACEDROP_SPEC.d": "/* @@trigger: bogus-ioctl */\n/* @@trigger-timing: before */\n",
		"test/unittest/mib/test.options":            "@@xfail: mib provider not yet implemented\n",
		"test/unittest/mib/tst.m.d":                 "",
		"test/unittest/mib/tst.n.d":                 "/* @@no-xfail */\n",
		"test/unittest/sk/tst.s.d":                  "/* @@skip: needs to be reworked */\n",
		"test/unittest/sk/err.plain.d":              "",
		"postprocessed.txt":                         "sk/err.plain\n",
	})
	tests, err := Discover(root, "x86_64", nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Test{}
	for _, tt := range tests {
		byName[tt.Name] = tt
	}
	if len(tests) != 8 {
		t.Fatalf("found %d tests, want 8: %v", len(tests), byName)
	}
	checks := []struct {
		name string
		ok   func(*Test) bool
	}{
		{"pre/tst.a", func(x *Test) bool {
			return x.RuntestOpts == "-C" && x.Expected == "test/unittest/pre/tst.a.r" && x.Kind == KindTst &&
				x.Timeout == DefaultTimeout && x.Path == "test/unittest/pre/tst.a.d" && x.Dir == "pre"
		}},
		{"pre/tst.b", func(x *Test) bool {
			return x.RuntestOpts == "-qC" && x.NoSort && x.Expected == "test/unittest/pre/tst.b.x86_64.r"
		}},
		{"pre/err.D_SYNTAX.c", func(x *Test) bool { return x.Kind == KindErr && x.Tag == "D_SYNTAX" && x.Timeout == 15 }},
		{"drops/drp.DTRACEDROP_SPEC", func(x *Test) bool {
			return x.Kind == KindDrp && x.Tag == "DTRACEDROP_SPEC" && x.Trigger == "bogus-ioctl" && x.TriggerTiming == "before"
		}},
		{"mib/tst.m", func(x *Test) bool { return x.XFail == "mib provider not yet implemented" }},
		{"mib/tst.n", func(x *Test) bool { return x.XFail == "" }},
		{"sk/tst.s", func(x *Test) bool { return x.Skipped && x.Skip == "needs to be reworked" }},
		{"sk/err.plain", func(x *Test) bool { return x.Postprocessed && x.Tag == "" && x.Expected == "" }},
	}
	for _, c := range checks {
		x := byName[c.name]
		if x == nil {
			t.Errorf("%s not found", c.name)
			continue
		}
		if !c.ok(x) {
			t.Errorf("%s: %+v", c.name, *x)
		}
	}

	only, err := Discover(root, "x86_64", regexp.MustCompile(`^pre/`))
	if err != nil || len(only) != 3 {
		t.Errorf("filtered discovery: %d tests, %v", len(only), err)
	}
}

func TestRunJudges(t *testing.T) {
	root := writeCorpus(t, map[string]string{
		"test/unittest/x/tst.ok.d":              "",
		"test/unittest/x/tst.ok.r":              "hello\n-- @@stderr --\ndtrace: script 'test/unittest/x/tst.ok.d' matched 1 probe\n",
		"test/unittest/x/tst.wrong.d":           "",
		"test/unittest/x/tst.wrong.r":           "goodbye\n",
		"test/unittest/x/err.D_SYNTAX.e.d":      "",
		"test/unittest/x/err.D_IDENT_UNDEF.f.d": "",
		"test/unittest/x/tst.trig.d":            "/* @@trigger: no-such-trigger */\n",
	})
	// A fake dtrace: a shell script that behaves according to the name
	// of the script it is given.
	fake := filepath.Join(t.TempDir(), "dtrace")
	script := `#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in -s) shift; s="$1";; esac; shift; done
case "$s" in
*tst.ok.d|*tst.wrong.d) echo hello; echo "dtrace: script '$s' matched 1 probe" >&2; exit 0;;
*err.D_SYNTAX*) echo "dtrace: failed to compile script $s: [D_SYNTAX] line 1: syntax error" >&2; exit 1;;
*) echo "dtrace: failed to compile script $s: line 1: oops" >&2; exit 1;;
esac
`
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tests, err := Discover(root, "x86_64", nil)
	if err != nil {
		t.Fatal(err)
	}
	results := Run(t.Context(), Config{Root: root, DTrace: fake, Workers: 2}, tests)
	want := map[string]Status{
		"x/tst.ok":              Pass,
		"x/tst.wrong":           Fail,
		"x/err.D_SYNTAX.e":      Pass,
		"x/err.D_IDENT_UNDEF.f": Fail,
		"x/tst.trig":            Skip,
	}
	for _, r := range results {
		if w, ok := want[r.Test.Name]; !ok || r.Status != w {
			t.Errorf("%s: %s (%s), want %s", r.Test.Name, r.Status, r.Reason, w)
		}
	}
}

func TestRetry(t *testing.T) {
	root := writeCorpus(t, map[string]string{
		"test/unittest/x/tst.flaky.d":  "",
		"test/unittest/x/tst.broken.d": "",
		"test/unittest/x/tst.listed.d": "",
	})
	dir := t.TempDir()
	fake := filepath.Join(dir, "dtrace")
	// tst.flaky fails the first time only; the others always fail.
	script := `#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in -s) shift; s="$1";; esac; shift; done
case "$s" in
*tst.flaky.d) [ -e ` + dir + `/seen ] && exit 0; touch ` + dir + `/seen; exit 1;;
esac
exit 1
`
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tests, err := Discover(root, "x86_64", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Root: root, DTrace: fake, Workers: 1}
	results := Run(t.Context(), cfg, tests)
	xf := ExpectedFailures{"x/tst.listed": "known"}
	flaky := Retry(t.Context(), cfg, results, xf)
	if len(flaky) != 1 || !strings.HasPrefix(flaky[0], "x/tst.flaky: exit status 1") {
		t.Errorf("flaky = %v", flaky)
	}
	s := Summarize(results, xf)
	if s.Passed != 1 || len(s.Unexpected) != 1 || s.Unexpected[0].Test.Name != "x/tst.broken" {
		t.Errorf("summary %+v", s)
	}
}
