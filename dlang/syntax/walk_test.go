package syntax

import (
	"fmt"
	"testing"
)

// TestInspect walks the trees of all valid test programs and checks that
// every node has a valid span inside its file, nested in its parent's.
func TestInspect(t *testing.T) {
	for _, tt := range parseTests {
		if tt.src == "BEGIN { x = (y)z }" {
			continue
		}
		cfg := &Config{IsTypeName: func(n string) bool { return n == "psinfo_t" || n == "out_t" }}
		prog, err := cfg.Parse(NewFileSet(), "t.d", []byte(tt.src))
		if err != nil {
			t.Fatalf("%q: %v", tt.src, err)
		}
		checkSpans(t, tt.src, prog)
	}
}

// checkSpans checks that every node of prog has a valid span inside the
// file, nested in its parent's.
func checkSpans(t *testing.T, name string, prog *Program) {
	t.Helper()
	base, end := prog.File.Pos(0), prog.File.Pos(prog.File.Size())
	var walk func(n, parent Node)
	walk = func(n, parent Node) {
		if !n.Pos().IsValid() || n.Pos() < base || n.End() > end || n.End() < n.Pos() {
			t.Errorf("%s: %T %s has span %d..%d outside %d..%d", name, n, String(n), n.Pos(), n.End(), base, end)
		}
		// Directives may sit inside a clause's span but are not its
		// children; the program's span is the whole file; derivations
		// (*a[2]) are chained, not nested, in the text.
		_, chained := parent.(DeclType)
		if _, ok := parent.(*Program); !ok && parent != nil && !chained {
			if n.Pos() < parent.Pos() || n.End() > parent.End() {
				t.Errorf("%s: %T %s (%d..%d) not inside %T %s (%d..%d)", name,
					n, String(n), n.Pos(), n.End(), parent, String(parent), parent.Pos(), parent.End())
			}
		}
		for _, c := range children(n) {
			walk(c, n)
		}
	}
	walk(prog, nil)
}

// TestInspectCount checks that Inspect reaches every identifier once.
func TestInspectCount(t *testing.T) {
	src := "inline int N = a + b;\nBEGIN /c/ { d = e[f, g]->h; @i[j] = count(); self->k = (int)l; }"
	prog, err := Parse(NewFileSet(), "t.d", []byte(src), 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	Inspect(prog, func(n Node) bool {
		if id, ok := n.(*Ident); ok {
			names = append(names, id.Name)
		}
		return true
	})
	if got, want := fmt.Sprint(names), "[N a b c d e f g h j count k l]"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
