package syntax

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// corpusDir is the conformance corpus's unittest directory.
const corpusDir = "/work/shared/conformance/dtrace-utils/test/unittest"

// lexicalTags are the error tags the parser itself reports; any other
// tag is the checker's business and the parser must accept the program.
var lexicalTags = map[string]bool{
	"D_SYNTAX": true, "D_CHR_NL": true, "D_CHR_NULL": true, "D_CHR_OFLOW": true,
	"D_STR_NL": true, "D_INT_OFLOW": true, "D_INT_DIGIT": true,
	"D_PRAGCTL_INVAL": true, "D_DECL_CLASS": true, "D_DECL_COMBO": true,
	"D_DECL_TYPERED": true,
}

// needsLibrary lists tests whose error comes from dtrace acting on a
// pragma, which the parser leaves to its Config.Directive hook.
var needsLibrary = map[string]bool{
	"pragma/err.D_PRAGMA_INVAL.d":                  true,
	"pragma/err.D_PRAGMA_MALFORM.d":                true,
	"speculation/err.D_PRAGMA_MALFORM.NspecExpr.d": true,
}

// corpusTypeName stands in for the kernel's and dtrace's library types:
// the corpus uses names like psinfo_t and __u8.
func corpusTypeName(name string) bool {
	switch name {
	case "__u8", "__u16", "__u32", "__u64", "u8", "u16", "u32", "u64", "bool":
		return true
	case "vnode_t": // Solaris only
		return false
	}
	return strings.HasSuffix(name, "_t") && !strings.Contains(name, "`")
}

var (
	hexNumber    = regexp.MustCompile(`0x[0-9a-fA-F]+`)
	runtestOpts  = regexp.MustCompile(`@@runtest-opts:\s*(.*?)\s*(\*/)?$`)
	compileError = regexp.MustCompile(`^dtrace: failed to compile script [^:]*: (?:\[(D_[A-Z_0-9]+)\] )?(?:line (\d+): )?(.*)$`)
)

// corpusOptions returns the runtest options of a test: its own and those
// of test.options files in its directory and the ones above.
func corpusOptions(path string, src []byte) string {
	var opts []string
	for _, line := range strings.Split(string(src), "\n") {
		if m := runtestOpts.FindStringSubmatch(line); m != nil {
			opts = append(opts, m[1])
		}
	}
	for dir := filepath.Dir(path); strings.HasPrefix(dir, corpusDir); dir = filepath.Dir(dir) {
		if b, err := os.ReadFile(filepath.Join(dir, "test.options")); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if m := runtestOpts.FindStringSubmatch(line); m != nil {
					opts = append(opts, m[1])
				}
			}
		}
	}
	return strings.Join(opts, " ")
}

// usesCpp reports whether options run the C preprocessor first.
func usesCpp(opts string) bool {
	for _, f := range strings.Fields(opts) {
		if f == "-xcpp" || strings.HasPrefix(f, "-") && !strings.HasPrefix(f, "-x") && strings.Contains(f, "C") {
			return true
		}
	}
	return false
}

// expectedError returns the compile error a test's expected output
// shows, if any: tag, line and message.
func expectedError(path string) (tag, line, msg string, ok bool) {
	base := strings.TrimSuffix(path, ".d")
	b, err := os.ReadFile(base + ".x86_64.r")
	if err != nil {
		b, err = os.ReadFile(base + ".r")
	}
	if err != nil {
		return "", "", "", false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if m := compileError.FindStringSubmatch(l); m != nil {
			return m[1], m[2], m[3], true
		}
	}
	return "", "", "", false
}

// TestCorpus parses every D program of the conformance corpus that does
// not need the preprocessor. Programs must parse unless their expected
// output shows a syntax error, which we must then report on the same
// line with the same words.
func TestCorpus(t *testing.T) {
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skipf("no corpus: %v", err)
	}
	var files []string
	filepath.WalkDir(corpusDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".d") {
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	var bad []string
	checked := 0
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		opts := corpusOptions(path, src)
		if usesCpp(opts) {
			continue
		}
		rel := strings.TrimPrefix(path, corpusDir+"/")
		if needsLibrary[rel] {
			continue
		}
		name := filepath.Base(path)
		fset := NewFileSet()
		mode := Mode(0)
		if strings.Contains(opts, "-xpspec") {
			mode |= PSpec
		}
		cfg := &Config{Mode: mode, IsTypeName: corpusTypeName}
		prog, perr := cfg.Parse(fset, "test/unittest/"+rel, src)
		if perr == nil {
			checkSpans(t, rel, prog)
		}
		var got *Error
		if perr != nil {
			got = perr.(ErrorList)[0]
		}
		checked++
		// err.D_TAG.*.d names the error it expects.
		wantTag := ""
		if f := strings.Split(name, "."); len(f) > 2 && f[0] == "err" && lexicalTags[f[1]] {
			wantTag = f[1]
		}
		tag, line, msg, hasErr := expectedError(path)
		if hasErr && (tag != "" && !lexicalTags[tag] || strings.HasPrefix(msg, "format conversion")) {
			hasErr = false
		}
		if hasErr && tag == "" && !strings.Contains(msg, "syntax error") &&
			!strings.Contains(msg, "encountered") && !strings.Contains(msg, "expected") {
			hasErr = false
		}
		switch {
		case hasErr && got == nil:
			bad = append(bad, rel+": parsed, want "+tag+" line "+line+": "+msg)
		case hasErr:
			gl := itoa(got.Pos.Line)
			if gl != line || hexNumber.ReplaceAllString(got.Msg, "{ptr}") != msg || tag != "" && got.Tag != tag {
				bad = append(bad, rel+": got ["+got.Tag+"] line "+gl+": "+got.Msg+"; want ["+tag+"] line "+line+": "+msg)
			}
		case wantTag != "" && got == nil:
			if _, _, _, ok := expectedError(path); !ok {
				bad = append(bad, rel+": parsed, want "+wantTag)
			}
		case got != nil && wantTag != "" && got.Tag != wantTag:
			bad = append(bad, rel+": got ["+got.Tag+"] line "+itoa(got.Pos.Line)+": "+got.Msg+"; want "+wantTag)
		case got != nil && wantTag == "":
			bad = append(bad, rel+": unexpected error ["+got.Tag+"] line "+itoa(got.Pos.Line)+": "+got.Msg)
		}
	}
	t.Logf("checked %d programs", checked)
	for _, b := range bad {
		t.Error(b)
	}
}

func itoa(n int) string {
	return strings.TrimSpace(strings.Replace(string(rune('0'+0)), "0", "", 1) + fmtInt(n))
}

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}
