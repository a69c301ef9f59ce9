package check_test

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
	"github.com/dtrace-go/dtrace/dlib"
)

// corpusDir is the conformance corpus's unittest directory.
const corpusDir = "/work/shared/conformance/dtrace-utils/test/unittest"

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/corpus_pass.txt with the tests that pass now")

// corpusCase is one corpus program and what the checker must say about it.
type corpusCase struct {
	rel     string // test/unittest/dir/name.d
	path    string
	wantTag string // "" for a tst.*.d that must check cleanly
	wantMsg string // expected first error "[TAG] line N: msg" from the .r, if any
	conf    *check.Config
	skipWhy string
	cpp     bool // run through the C preprocessor first (-C)
}

// runtestOpts returns the @@runtest-opts words of a test and of the
// test.options files above it.
func runtestOpts(path string, src []byte) []string {
	var opts []string
	grab := func(text string) {
		for _, line := range strings.Split(text, "\n") {
			if i := strings.Index(line, "@@runtest-opts:"); i >= 0 {
				rest := line[i+len("@@runtest-opts:"):]
				rest, _, _ = strings.Cut(rest, "*/")
				opts = append(opts, strings.Fields(rest)...)
			}
		}
	}
	for dir := filepath.Dir(path); strings.HasPrefix(dir, corpusDir); dir = filepath.Dir(dir) {
		if b, err := os.ReadFile(filepath.Join(dir, "test.options")); err == nil {
			grab(string(b))
		}
	}
	grab(string(src))
	return opts
}

// expectedError extracts the compile error line of an expected output.
func expectedError(r string) string {
	_, after, ok := strings.Cut(r, ": failed to compile script ")
	if !ok {
		return ""
	}
	_, msg, ok := strings.Cut(after, ".d: ")
	if !ok {
		return ""
	}
	return strings.TrimRight(msg, "\n")
}

func loadCorpus(t *testing.T) []*corpusCase {
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skip("conformance corpus not present")
	}
	var cases []*corpusCase
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*.d"))
	more, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*", "*.d"))
	files = append(files, more...)
	sort.Strings(files)
	for _, path := range files {
		base := filepath.Base(path)
		rel := "test/unittest/" + strings.TrimPrefix(path, corpusDir+"/")
		cc := &corpusCase{rel: rel, path: path, conf: &check.Config{MacroArgs: []string{rel}, ProbeArgs: dtraceProbes, Kernel: check.KernelForTest()}}
		switch {
		case strings.HasPrefix(base, "err.D_"):
			cc.wantTag = strings.SplitN(strings.TrimPrefix(base, "err."), ".", 2)[0]
		case strings.HasPrefix(base, "tst."):
		default:
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rfile := strings.TrimSuffix(path, ".d") + ".r"
		if b, err := os.ReadFile(strings.TrimSuffix(path, ".d") + ".x86_64.r"); err == nil {
			cc.wantMsg = expectedError(string(b))
		} else if b, err := os.ReadFile(rfile); err == nil {
			cc.wantMsg = expectedError(string(b))
			if cc.wantTag == "" && cc.wantMsg != "" {
				continue // a tst whose expected output is a compile error
			}
		}
		if strings.Contains(string(src), "@@skip") {
			cc.skipWhy = "@@skip"
		}
		if cc.wantTag == "" && strings.Contains(string(src), "@@xfail") {
			cc.skipWhy = "@@xfail"
		}
		opts := runtestOpts(path, src)
		for i := 0; i < len(opts); i++ {
			o := opts[i]
			switch o {
			case "-c", "-p":
				cc.conf.Macros = map[string]int64{"target": 1234}
				i++
				continue
			case "-o", "-b", "-s", "-n", "-P", "-m", "-f", "-i", "-L", "-X", "-U":
				i++
				continue
			case "-x":
				if i+1 < len(opts) {
					o = "-x" + opts[i+1]
					i++
				}
			case "-V", "-h", "-G", "-l", "-e":
				cc.skipWhy = "not a compile of the program"
			}
			if len(o) > 2 && o[0] == '-' && o[1] != 'x' && strings.Trim(o[1:], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" {
				// A cluster of one-letter flags, like -qC.
				if strings.Contains(o, "C") {
					cc.cpp = true
				}
				if strings.Contains(o, "w") {
					cc.conf.Destructive = true
				}
				continue
			}
			switch {
			case o == "-xargref":
				cc.conf.ArgRef = true
			case o == "-C":
				cc.cpp = true
			case strings.HasPrefix(o, "-I") || strings.HasPrefix(o, "-D") || strings.HasPrefix(o, "-U"):
				cc.skipWhy = "needs cpp options"
			case o == "-w":
				cc.conf.Destructive = true
			case o == "-xdefaultargs":
				cc.conf.DefaultArgs = true
			case strings.HasPrefix(o, "-xstrsize="):
				cc.conf.StrSize = parseSize(strings.TrimPrefix(o, "-xstrsize="))
			case strings.HasPrefix(o, "$"):
				cc.conf.MacroArgs = append(cc.conf.MacroArgs, "1234")
			case strings.HasPrefix(o, "-"):
			default:
				if o != "-x" {
					cc.conf.MacroArgs = append(cc.conf.MacroArgs, o)
				}
			}
		}
		if !strings.HasPrefix(cc.rel, "test/unittest/") {
			continue
		}
		cases = append(cases, cc)
	}
	return cases
}

// dtraceProbes knows the dtrace provider's probes, as the dtrace package
// would tell the checker.
func dtraceProbes(desc string) *check.ProbeInfo {
	switch desc {
	case "BEGIN", "END", ":::BEGIN", ":::END", "dtrace:::BEGIN", "dtrace:::END":
		return &check.ProbeInfo{Name: "dtrace:::" + desc[strings.LastIndex(desc, ":")+1:], Args: []types.Type{}}
	}
	return nil
}

func parseSize(s string) int64 {
	var n int64
	for _, r := range s {
		if r < '0' || r > '9' {
			break
		}
		n = n*10 + int64(r-'0')
	}
	return n
}

// runCase parses and checks one corpus program. It returns the first error
// as "[TAG] line N: msg" ("" if none) and whether parsing failed.
func runCase(cc *corpusCase) (got string, parseErr bool) {
	src, _ := os.ReadFile(cc.path)
	if cc.cpp {
		// As dtrace -C does; line markers keep the line numbers.
		cmd := exec.Command("cpp", "-undef", "-D__linux__", "-D__x86_64__")
		cmd.Stdin = bytes.NewReader(src)
		out, err := cmd.Output()
		if err != nil {
			return "cpp failed: " + err.Error(), true
		}
		src = out
	}
	// The D library files the program uses, checked against the kernel,
	// as dtrace loads them.
	fset := syntax.NewFileSet()
	k := cc.conf.Kernel
	lib := dlib.LoadSources(fset, &check.Config{Kernel: k, StrSize: cc.conf.StrSize}, check.KernelTypeNames(k), dlib.Needed(dlib.Sources(), string(src)))
	pc := &syntax.Config{IsTypeName: lib.IsTypeName, IsIdent: lib.IsIdent, Directive: check.Directive}
	prog, err := pc.Parse(fset, cc.rel, src)
	if err != nil {
		if l, ok := err.(syntax.ErrorList); ok && len(l) > 0 {
			return "[" + l[0].Tag + "] " + l[0].Error(), true
		}
		return err.Error(), true
	}
	cc.conf.LibraryPrograms = len(lib.Programs)
	cc.conf.Source = func(string) []byte { return src }
	_, err = check.Check(fset, append(lib.Programs, prog), cc.conf)
	if err != nil {
		return err.(check.ErrorList)[0].Tagged(), false
	}
	return "", false
}

// tagOf returns the tag of "[TAG] ...".
func tagOf(s string) string {
	if !strings.HasPrefix(s, "[") {
		return ""
	}
	return s[1:strings.Index(s, "]")]
}

// TestCorpus checks the corpus programs: an err.D_TAG program must fail
// with D_TAG (and the message of its .r when there is one), a tst program
// must check cleanly. testdata/corpus_pass.txt lists the programs that
// pass today (with the running kernel's BTF for kernel types; without it
// the list is not enforced); any of them failing fails the test. Run with -v for a
// summary of the others, -update-corpus to rewrite the list.
func TestCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("the corpus takes seconds")
	}
	cases := loadCorpus(t)
	want := map[string]bool{}
	if f, err := os.Open("testdata/corpus_pass.txt"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
				want[l] = true
			}
		}
		f.Close()
	}
	var passing []string
	stats := map[string][2]int{}
	mismatch := map[string]int{}
	for _, cc := range cases {
		if cc.skipWhy != "" {
			continue
		}
		if cc.cpp {
			if _, err := exec.LookPath("cpp"); err != nil {
				continue
			}
		}
		got, parseErr := runCase(cc)
		kind := "tst"
		ok := false
		if cc.wantTag != "" {
			kind = "err"
			ok = tagOf(got) == cc.wantTag
			if ok && cc.wantMsg != "" && !parseErr {
				// Some expected outputs were cut short by a filter.
				ok = got == cc.wantMsg || strings.HasSuffix(cc.wantMsg, ":") && strings.HasPrefix(got, cc.wantMsg)
			}
			if parseErr && cc.wantTag != "D_SYNTAX" && tagOf(got) != cc.wantTag {
				mismatch["parse error instead"]++
			}
		} else {
			ok = got == ""
		}
		s := stats[kind]
		if ok {
			s[0]++
			passing = append(passing, cc.rel)
		} else {
			s[1]++
			if want[cc.rel] && check.KernelForTest() != nil {
				t.Errorf("%s: regression: got %q, want tag %q msg %q", cc.rel, got, cc.wantTag, cc.wantMsg)
			} else if testing.Verbose() {
				t.Logf("FAIL %s: got %q want %q %q", cc.rel, got, cc.wantTag, cc.wantMsg)
			}
			if cc.wantTag != "" {
				mismatch[cc.wantTag+" <- "+tagOf(got)]++
			}
		}
		stats[kind] = s
	}
	t.Logf("err: %d pass, %d fail; tst: %d pass, %d fail", stats["err"][0], stats["err"][1], stats["tst"][0], stats["tst"][1])
	if testing.Verbose() {
		var keys []string
		for k := range mismatch {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.Logf("mismatch %-40s %d", k, mismatch[k])
		}
	}
	if *updateCorpus {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		out := "# Corpus programs the checker handles today (go test -run TestCorpus -update-corpus).\n" + strings.Join(passing, "\n") + "\n"
		if err := os.WriteFile("testdata/corpus_pass.txt", []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCorpusMinimalConfig checks every corpus program with an empty
// Config (no kernel, no probe information, no source text): the checker
// must not panic, whatever it reports.
func TestCorpusMinimalConfig(t *testing.T) {
	for _, cc := range loadCorpus(t) {
		src, _ := os.ReadFile(cc.path)
		fset := syntax.NewFileSet()
		prog, _ := syntax.Parse(fset, cc.rel, src, 0)
		if prog == nil {
			continue
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic: %v", cc.rel, r)
				}
			}()
			check.Check(fset, []*syntax.Program{prog}, &check.Config{})
		}()
	}
}
