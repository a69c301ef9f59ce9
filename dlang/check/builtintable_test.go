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

// TestVarTable checks that every VarID has its row, found by name, with
// a type that parses, or an element type for the arrays.
func TestVarTable(t *testing.T) {
	c := newChecker(syntax.NewFileSet(), &Config{})
	for id := VarNone + 1; id < NumVarIDs; id++ {
		d := VarByID(id)
		if d == nil || d.Name == "" {
			t.Errorf("VarID %d has no row", id)
			continue
		}
		if d.ID != id || LookupVar(d.Name) != d {
			t.Errorf("%s: ID %d, LookupVar %p, want %d, %p", d.Name, d.ID, LookupVar(d.Name), id, d)
		}
		if d.array != (d.Type == "") || d.array != (d.elem != nil) {
			t.Errorf("%s: an array has an element type and no type, a scalar the reverse", d.Name)
		}
		if !d.array && c.localProtoType(d.Type) == nil {
			t.Errorf("%s: type %q does not parse", d.Name, d.Type)
		}
		if c.builtins[d.Name] == nil {
			t.Errorf("%s: not declared by the checker", d.Name)
		}
	}
	if VarByID(VarNone) != nil || VarByID(NumVarIDs) != nil || LookupVar("nosuch") != nil {
		t.Error("lookups of no variable found one")
	}
}
