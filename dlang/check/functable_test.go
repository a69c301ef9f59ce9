package check

import (
	"testing"

	"github.com/dtrace-go/dtrace/dlang/syntax"
)

// TestFuncTable checks that every FuncID has its row, found by name, and
// that the prototypes parse without the kernel's types or with them
// left opaque.
func TestFuncTable(t *testing.T) {
	seen := map[string]bool{}
	c := newChecker(syntax.NewFileSet(), &Config{})
	for id := FuncNone + 1; id < NumFuncIDs; id++ {
		d := FuncByID(id)
		if d == nil || d.Name == "" {
			t.Errorf("FuncID %d has no row", id)
			continue
		}
		if seen[d.Name] {
			t.Errorf("%s: two rows", d.Name)
		}
		seen[d.Name] = true
		if d.ID != id || LookupFunc(d.Name) != d {
			t.Errorf("%s: ID %d, LookupFunc %p, want %d, %p", d.Name, d.ID, LookupFunc(d.Name), id, d)
		}
		if (d.incrArg != 0 || d.params != nil || d.scalarArg) && d.Kind != AggFunc {
			t.Errorf("%s: aggregating-function columns on a %v", d.Name, d.Kind)
		}
		if s := c.localParseProto(d.Proto); s == nil || s.result == nil {
			t.Errorf("%s: prototype %q does not parse", d.Name, d.Proto)
		}
	}
	if FuncByID(FuncNone) != nil || FuncByID(NumFuncIDs) != nil || LookupFunc("nosuch") != nil {
		t.Error("lookups of no function found one")
	}
}
