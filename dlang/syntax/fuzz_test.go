package syntax

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that no input panics the parser, that a failed parse
// reports an error with a position inside the file, and that a tree can
// always be printed.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/fuzz/*.d")
	for _, name := range seeds {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(0))
	}
	f.Add([]byte("BEGIN { x = (int)1; }"), uint8(1))
	f.Add([]byte("#pragma D option quiet\n# 3 \"x\"\nint*x"), uint8(2))
	f.Add([]byte("a + (int)b[1]->c"), uint8(8))
	f.Add([]byte("struct foo *(*)[4]"), uint8(16))
	f.Fuzz(func(t *testing.T, src []byte, mode uint8) {
		fset := NewFileSet()
		cfg := &Config{Mode: Mode(mode) & (BareDescs | PSpec)}
		if mode&4 != 0 {
			cfg.IsTypeName = func(n string) bool { return len(n)%2 == 0 }
		}
		var err error
		switch {
		case mode&8 != 0:
			var x Expr
			x, err = cfg.ParseExpr(fset, "f.d", src)
			if err == nil {
				_ = String(x)
			}
		case mode&16 != 0:
			var tn *TypeName
			tn, err = cfg.ParseType(fset, "f.d", src)
			if err == nil {
				_ = String(tn)
			}
		default:
			var prog *Program
			prog, err = cfg.Parse(fset, "f.d", src)
			if prog == nil {
				t.Fatal("nil program")
			}
			_ = String(prog)
		}
		if err == nil {
			return
		}
		list, ok := err.(ErrorList)
		if !ok || len(list) == 0 {
			t.Fatalf("error %T %v", err, err)
		}
		for _, e := range list {
			if strings.HasPrefix(e.Msg, "internal error") {
				t.Fatalf("%q: %s", src, e.Msg)
			}
			if e.Msg == "" || e.Tag == "" {
				t.Fatalf("empty error %+v", e)
			}
			if e.Pos.Offset < 0 || e.Pos.Offset > len(src) {
				t.Fatalf("bad position %+v for %q", e.Pos, src)
			}
		}
	})
}
