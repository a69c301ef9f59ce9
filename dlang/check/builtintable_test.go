package check

import (
	"testing"

	"github.com/dtrace-go/dtrace/dlang/syntax"
)

// checkTableRows checks what the function and variable tables share:
// every ID from 1 to n-1 has its own named row, which knows its ID and is
// found by its name, and ID 0, ID n and an unknown name find no row. It
// returns the rows found.
func checkTableRows[R any](t *testing.T, what string, n int, byID func(int) *R, lookup func(string) *R, ident func(*R) (string, int)) []*R {
	t.Helper()
	var rows []*R
	seen := map[string]bool{}
	for id := 1; id < n; id++ {
		d := byID(id)
		if d == nil {
			t.Errorf("%s ID %d has no row", what, id)
			continue
		}
		name, did := ident(d)
		switch {
		case name == "":
			t.Errorf("%s ID %d has no row", what, id)
			continue
		case seen[name]:
			t.Errorf("%s: two rows", name)
		case did != id || lookup(name) != d:
			t.Errorf("%s: ID %d, lookup %p, want %d, %p", name, did, lookup(name), id, d)
		}
		seen[name] = true
		rows = append(rows, d)
	}
	if byID(0) != nil || byID(n) != nil || lookup("nosuch") != nil {
		t.Errorf("lookups of no %s found one", what)
	}
	return rows
}

// TestFuncTable checks that every FuncID has its row, found by name, and
// that the prototypes parse without the kernel's types or with them
// left opaque.
func TestFuncTable(t *testing.T) {
	c := newChecker(syntax.NewFileSet(), &Config{})
	byID := func(id int) *FuncDef { return FuncByID(FuncID(id)) }
	for _, d := range checkTableRows(t, "function", int(NumFuncIDs), byID, LookupFunc, func(d *FuncDef) (string, int) { return d.Name, int(d.ID) }) {
		if (d.incrArg != 0 || d.params != nil || d.scalarArg) && d.Kind != AggFunc {
			t.Errorf("%s: aggregating-function columns on a %v", d.Name, d.Kind)
		}
		if s := c.localParseProto(d.Proto); s == nil || s.result == nil {
			t.Errorf("%s: prototype %q does not parse", d.Name, d.Proto)
		}
	}
}

// TestVarTable checks that every VarID has its row, found by name, with
// a type that parses, or an element type for the arrays.
func TestVarTable(t *testing.T) {
	c := newChecker(syntax.NewFileSet(), &Config{})
	byID := func(id int) *VarDef { return VarByID(VarID(id)) }
	for _, d := range checkTableRows(t, "variable", int(NumVarIDs), byID, LookupVar, func(d *VarDef) (string, int) { return d.Name, int(d.ID) }) {
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
}
