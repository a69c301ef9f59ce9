package codegen

import (
	"testing"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/program"
)

// unsupportedFuncs are the rows of the function table codegen has no
// generator for: calls of them fail to compile.
var unsupportedFuncs = map[string]bool{
	"ddi_pathname": true, "msgdsize": true, "msgsize": true,
}

// TestFuncGens checks funcGens against check's function table: every
// function has the generator its kind calls for, unless it is listed as
// unsupported.
func TestFuncGens(t *testing.T) {
	for id := check.FuncNone + 1; id < check.NumFuncIDs; id++ {
		d := check.FuncByID(id)
		g := &funcGens[id]
		if d == nil {
			t.Fatalf("FuncID %d has no row", id)
		}
		has := g.value != nil || g.stmt != nil
		if unsupportedFuncs[d.Name] {
			if has {
				t.Errorf("%s: listed as unsupported but has a generator", d.Name)
			}
			continue
		}
		switch d.Kind {
		case check.AggFunc:
			if program.AggFuncNamed(d.Name) == 0 || g.value != nil || g.stmt != nil {
				t.Errorf("%s: an aggregating function needs a program.AggFunc and no generator", d.Name)
			}
		case check.Subroutine:
			if g.value == nil || g.stmt != nil {
				t.Errorf("%s: a subroutine needs value only", d.Name)
			}
		case check.Action:
			if g.stmt == nil || g.act == program.ActNone {
				t.Errorf("%s: an action needs stmt and act", d.Name)
			}
			if (g.value != nil) != (g.kind != program.KindNone) {
				t.Errorf("%s: only the symbol actions have a value, and a value kind", d.Name)
			}
		}
		if funcGenOf(d.Name) != g {
			t.Errorf("%s: funcGenOf finds another entry", d.Name)
		}
	}
	if funcGenOf("nosuch") != nil {
		t.Error("funcGenOf found a function that does not exist")
	}
}

// TestVarGens checks varGens against check's variable table: every
// variable but args[] has a loader, the arrays have an indexer.
func TestVarGens(t *testing.T) {
	for id := check.VarNone + 1; id < check.NumVarIDs; id++ {
		d := check.VarByID(id)
		if d == nil {
			t.Fatalf("VarID %d has no row", id)
		}
		g := &varGens[id]
		if (g.load == nil) != (d.Name == "args") {
			t.Errorf("%s: load %v", d.Name, g.load != nil)
		}
		if (g.index != nil) != (d.Type == "") {
			t.Errorf("%s: index %v, but the arrays, and only they, are indexed", d.Name, g.index != nil)
		}
		if (g.strBound != 0 || g.keyInto != nil) && d.Type != "string" {
			t.Errorf("%s: a string bound on a %s", d.Name, d.Type)
		}
		if varGenOf(d.Name) != g {
			t.Errorf("%s: varGenOf finds another entry", d.Name)
		}
	}
	if varGenOf("nosuch") != nil {
		t.Error("varGenOf found a variable that does not exist")
	}
}
