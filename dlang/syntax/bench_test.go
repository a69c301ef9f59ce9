package syntax

import (
	"os"
	"strings"
	"testing"
)

// BenchmarkParse parses the fuzz seeds repeated into one large program.
func BenchmarkParse(b *testing.B) {
	var sb strings.Builder
	for _, name := range []string{"testdata/fuzz/clause.d", "testdata/fuzz/exprs.d"} {
		src, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		sb.Write(src)
	}
	one := sb.String()
	src := []byte(strings.Repeat(one, 200))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		cfg := &Config{IsTypeName: func(n string) bool { return n == "foo_t" }}
		if _, err := cfg.Parse(NewFileSet(), "b.d", src); err != nil {
			b.Fatal(err)
		}
	}
}
