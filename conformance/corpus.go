// Package conformance runs the dtrace-utils test corpus (the executable
// specification in ../shared/conformance) against a built dtrace binary and
// judges each test the way the original project's runtest.sh does: exit
// status, D_* error tags, and expected output after normalization.
//
// Tests are named by their path under test/unittest without ".d"
// ("options/tst.quiet"), the form used by postprocessed.txt and by
// expected-failures.txt.
package conformance

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// CorpusEnv names the environment variable that overrides the corpus root.
const CorpusEnv = "DTRACE_CORPUS"

// DefaultCorpus is the corpus root relative to the repository root.
const DefaultCorpus = "../shared/conformance/dtrace-utils"

// unitDir is where the tests live under the corpus root.
const unitDir = "test/unittest"

// DefaultTimeout is the original project's per-test timeout in seconds.
const DefaultTimeout = 41

// Kind is the class of a test, from its file name prefix.
type Kind int

// Test kinds.
const (
	KindTst Kind = iota // tst.*: must exit 0
	KindErr             // err.*: must exit 1
	KindDrp             // drp.*: drop tests, exit 0, tag in stderr
)

// Test is one test program of the corpus with its annotations.
type Test struct {
	// Name is the path under test/unittest without ".d".
	Name string
	// Dir is the directory part of Name ("options", "actions/trace").
	Dir string
	// Path is the script path relative to the corpus root, as given to -s.
	Path string
	// Kind is tst, err or drp.
	Kind Kind
	// Tag is the D_* tag of err.D_TAG.* tests or the drop tag of drp.TAG.*
	// tests, which stderr must contain in brackets.
	Tag string
	// Expected is the expected-output file relative to the corpus root
	// (.x86_64.r preferred over .r for the running architecture), or "".
	Expected string
	// Postprocessed is true for tests whose output the original project
	// filtered before comparing; they are judged by exit status alone.
	Postprocessed bool
	// Shell is true for a shell test (tst.*.sh, err.*.sh): a script run
	// with the dtrace under test as its argument, as runtest.sh runs it
	// (see RunShell). Path then names the script.
	Shell bool

	// Annotations (from the file or inherited from test.options files).
	RuntestOpts   string // @@runtest-opts, unexpanded
	Trigger       string // @@trigger program and arguments ("" none)
	TriggerTiming string // @@trigger-timing: before, after or seconds
	Timeout       int    // @@timeout in seconds (DefaultTimeout if unset)
	NoSort        bool   // @@nosort
	Skip          string // @@skip reason ("" = not skipped); see Skipped
	Skipped       bool   // @@skip present
	XFail         string // @@xfail reason of the original project
	Tags          string // @@tags
	// Reinvoke is @@reinvoke-failure: how many times more a failing test
	// runs before it counts as failed.
	Reinvoke int
	// TimeoutSuccess is @@timeout-success: running into the time limit is
	// not a failure.
	TimeoutSuccess bool
}

// Discover finds every tst.*, err.* and drp.* test under root (the
// dtrace-utils directory) whose name matches filter (nil: all), sorted by
// name: D programs (.d) and executable shell tests (tst.*.sh, err.*.sh).
// arch is the machine name (uname -m) for .ARCH.r files.
func Discover(root, arch string, filter *regexp.Regexp) ([]*Test, error) {
	post, err := readPostprocessed(root)
	if err != nil {
		return nil, err
	}
	base := filepath.Join(root, unitDir)
	var tests []*Test
	err = filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		file := d.Name()
		ext := filepath.Ext(file)
		if ext == ".sh" {
			// runtest.sh runs a .sh only when it is executable.
			if info, err := d.Info(); err != nil || info.Mode()&0o111 == 0 {
				return nil
			}
		} else if ext != ".d" {
			return nil
		}
		var kind Kind
		switch {
		case strings.HasPrefix(file, "tst."):
			kind = KindTst
		case strings.HasPrefix(file, "err."):
			kind = KindErr
		case strings.HasPrefix(file, "drp.") && ext == ".d":
			kind = KindDrp
		default:
			return nil
		}
		rel, err := filepath.Rel(base, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		name := strings.TrimSuffix(rel, ext)
		if filter != nil && !filter.MatchString(name) {
			return nil
		}
		t := &Test{
			Name:  name,
			Dir:   filepath.ToSlash(filepath.Dir(rel)),
			Path:  unitDir + "/" + rel,
			Kind:  kind,
			Shell: ext == ".sh",
		}
		if kind == KindErr && strings.HasPrefix(file, "err.D_") || kind == KindDrp {
			if parts := strings.Split(file, "."); len(parts) >= 3 {
				t.Tag = parts[1]
			}
		}
		stem := strings.TrimSuffix(path, ext)
		for _, cand := range []string{stem + "." + arch + ".r", stem + ".r"} {
			if _, err := os.Stat(cand); err == nil {
				r, _ := filepath.Rel(root, cand)
				t.Expected = filepath.ToSlash(r)
				break
			}
		}
		t.Postprocessed = post[name]
		if err := t.readAnnotations(root); err != nil {
			return err
		}
		tests = append(tests, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(tests, func(i, j int) bool { return tests[i].Name < tests[j].Name })
	return tests, nil
}

// readPostprocessed reads postprocessed.txt beside the dtrace-utils
// directory (absent is fine).
func readPostprocessed(root string) (map[string]bool, error) {
	m := map[string]bool{}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Clean(root)), "postprocessed.txt"))
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			m[strings.TrimSuffix(l, ".d")] = true
		}
	}
	return m, nil
}

// readAnnotations fills the annotation fields, looking in the test file and
// then in test.options files of its directory and the ones above it, up to
// test/, as runtest.sh does.
func (t *Test) readAnnotations(root string) error {
	files := []string{filepath.Join(root, t.Path)}
	for dir := filepath.Dir(t.Path); dir != "." && dir != "/" && dir != "test"; dir = filepath.Dir(dir) {
		files = append(files, filepath.Join(root, dir, "test.options"))
	}
	files = append(files, filepath.Join(root, "test", "test.options"))
	var texts []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			texts = append(texts, "")
			continue
		}
		if err != nil {
			return err
		}
		texts = append(texts, string(data))
	}
	get := func(name string) (string, bool) {
		for _, text := range texts {
			if v, ok := Annotation(text, name); ok {
				return v, true
			}
		}
		return "", false
	}
	t.RuntestOpts, _ = get("runtest-opts")
	t.Trigger, _ = get("trigger")
	t.TriggerTiming, _ = get("trigger-timing")
	t.Tags, _ = get("tags")
	t.Timeout = DefaultTimeout
	if v, ok := get("timeout"); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
			t.Timeout = n
		}
	}
	_, t.NoSort = get("nosort")
	_, t.TimeoutSuccess = get("timeout-success")
	if v, ok := get("reinvoke-failure"); ok {
		t.Reinvoke, _ = strconv.Atoi(strings.TrimSpace(v))
	}
	t.Skip, t.Skipped = get("skip")
	if x, ok := get("xfail"); ok {
		if _, no := get("no-xfail"); !no {
			t.XFail = x
			if t.XFail == "" {
				t.XFail = "marked @@xfail"
			}
		}
	}
	return nil
}

// Annotation extracts "@@name: value" (or a bare "@@name") from text as
// runtest.sh's extract_options does: the first matching line wins; the value
// loses a trailing "*/" and trailing blanks. "@@name-other" does not match
// "@@name".
func Annotation(text, name string) (string, bool) {
	tag := "@@" + name
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		for off := 0; ; {
			i := strings.Index(line[off:], tag)
			if i < 0 {
				break
			}
			i += off
			rest := line[i+len(tag):]
			off = i + len(tag)
			trimmed := strings.TrimLeft(rest, " ")
			switch {
			case strings.HasPrefix(trimmed, ":"):
				v := strings.TrimPrefix(trimmed, ":")
				v = strings.TrimLeft(v, " ")
				return cleanValue(v), true
			case rest == "" || rest[0] == ' ':
				return cleanValue(strings.TrimLeft(rest, " ")), true
			}
		}
	}
	return "", false
}

func cleanValue(v string) string {
	v = strings.TrimRight(v, " \t")
	v = strings.TrimSuffix(v, "*/")
	return strings.TrimRight(v, " \t")
}

// SplitWords splits runtest options into words the way the shell would for
// simple cases: blanks separate words, single and double quotes group.
func SplitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
