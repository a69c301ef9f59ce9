package format

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var formatCall = regexp.MustCompile(`\b(printf|printa|system|freopen)\s*\(\s*"((?:[^"\\\n]|\\.)*)"`)

// TestCorpusFormatsParse parses every format string of the corpus's
// tst.*.d programs, which dtrace accepts.
func TestCorpusFormatsParse(t *testing.T) {
	root := "../../shared/conformance/dtrace-utils/test/unittest"
	if _, err := os.Stat(root); err != nil {
		t.Skipf("conformance corpus not available: %v", err)
	}
	n := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".d") {
			return err
		}
		base := filepath.Base(path)
		if !strings.HasPrefix(base, "tst.") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(src), "@@xfail") || strings.Contains(string(src), "@@skip") {
			return nil
		}
		for _, m := range formatCall.FindAllStringSubmatch(string(src), -1) {
			s, err := strconv.Unquote(`"` + m[2] + `"`)
			if err != nil {
				continue // D escapes Go does not know; not a format question
			}
			n++
			if _, err := Parse(s); err != nil {
				t.Errorf("%s: %s(%q): %v", path, m[1], s, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d format strings", n)
	if n < 1000 {
		t.Errorf("only %d format strings found", n)
	}
}
