package dtrace

import (
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
)

// TestDumpTrees checks the tree option's passes: the parse tree, then
// with types, then with the constants folded.
func TestDumpTrees(t *testing.T) {
	fset := syntax.NewFileSet()
	ast, err := syntax.Parse(fset, "t.d", []byte("BEGIN { x = 1 + 2; }"), 0)
	if err != nil {
		t.Fatal(err)
	}
	info, err := check.Check(fset, []*syntax.Program{ast}, &check.Config{})
	if err != nil {
		t.Fatal(err)
	}
	dump := func(mask int64) string {
		var b strings.Builder
		dumpTrees(&b, mask, ast, info)
		return b.String()
	}
	if got := dump(Unset); got != "" {
		t.Errorf("tree unset printed %q", got)
	}
	pass1 := `parse tree, pass 1:
Program
  ProbeClause
    ProbeDesc Text="BEGIN"
    BlockStmt
      ExprStmt
        AssignExpr Op="="
          Ident Name="x"
          BinaryExpr Op="+"
            IntLit Text="1" Value=1
            IntLit Text="2" Value=2
`
	if got := dump(1); got != pass1 {
		t.Errorf("tree=1:\n%s\nwant:\n%s", got, pass1)
	}
	got := dump(6)
	if strings.Contains(got, "pass 1") || !strings.Contains(got, "pass 2:") || !strings.Contains(got, "pass 3:") {
		t.Fatalf("tree=6 passes wrong:\n%s", got)
	}
	p2, p3, _ := strings.Cut(got, "parse tree, pass 3:")
	if !strings.Contains(p2, `BinaryExpr Op="+" (type=int)`) || strings.Contains(p2, "value=") {
		t.Errorf("pass 2 lacks types or shows values:\n%s", p2)
	}
	if !strings.Contains(p3, `BinaryExpr Op="+" (type=int value=3)`) {
		t.Errorf("pass 3 lacks folded constants:\n%s", p3)
	}
}
