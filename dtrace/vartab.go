package dtrace

import (
	"fmt"
	"io"
	"strconv"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
	"github.com/dtrace-go/dtrace/program"
)

// This file writes the variable table that -S prints after each clause's
// code, in dtrace's layout: every variable the clause names, with its ID,
// its offset in its storage (globals in dt_gvars, clause-locals in the
// scratch area, thread-locals at 0 of their own value; none for builtins
// and associative arrays), its kind and scope, the instructions where it
// is valid, whether the clause reads (r) or writes (w) it, and its type.

// Variable access flags of a clause.
const (
	varRead = 1 << iota
	varWrite
)

// varUse is one row of a clause's variable table.
type varUse struct {
	name   string
	id     int
	offset int // -1: none
	kind   string
	scope  string
	flags  int
	typ    string
}

// writeVarTable prints the variables clause cl uses, after code of n
// instructions (counting the second half of a 16-byte instruction).
func writeVarTable(w io.Writer, cl *check.Clause, info *check.Info, spec *program.Spec, n int) {
	uses := clauseVars(cl, info, spec)
	if len(uses) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%-16s %-4s %-6s %-3s %-3s %-11s %-4s %s\n",
		"NAME", "ID", "OFFSET", "KND", "SCP", "RANGE", "FLAG", "TYPE")
	for _, u := range uses {
		off := ""
		if u.offset >= 0 {
			off = strconv.Itoa(u.offset)
		}
		flags := ""
		if u.flags&varRead != 0 {
			flags = "r"
		}
		if u.flags&varWrite != 0 {
			if flags != "" {
				flags += "/"
			}
			flags += "w"
		}
		fmt.Fprintf(w, "%-16s %-4x %-6s %-3s %-3s %-11s %-4s %s\n",
			u.name, u.id, off, u.kind, u.scope, fmt.Sprintf("[0-%d]", max(n-1, 0)), flags, u.typ)
	}
}

// clauseVars lists the variables the code of cl names (predicate and
// body), in order of first use, with how the clause accesses each.
func clauseVars(cl *check.Clause, info *check.Info, spec *program.Spec) []varUse {
	// A variable assigned with = is written only; with op=, ++ or -- read
	// and written. A member or an element of an array variable that is
	// assigned reads the variable (its address); an associative array's
	// element writes the array.
	written := map[syntax.Expr]int{}
	target := func(e syntax.Expr, flags int) {
		for {
			p, ok := e.(*syntax.ParenExpr)
			if !ok {
				break
			}
			e = p.X
		}
		switch x := e.(type) {
		case *syntax.Ident, *syntax.ScopedVar:
			written[x] = flags
		case *syntax.IndexExpr:
			if v, ok := info.Uses[x.X].(*check.Var); ok && v.Keys != nil {
				written[x.X] = flags
			}
		}
	}
	var order []check.Object
	flags := map[check.Object]int{}
	syntax.InspectCode(cl.Decl, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.AssignExpr:
			f := varWrite
			if x.Op != syntax.ASSIGN {
				f |= varRead
			}
			target(x.X, f)
		case *syntax.UnaryExpr:
			if x.Op == syntax.INC || x.Op == syntax.DEC {
				target(x.X, varRead|varWrite)
			}
		case *syntax.PostfixExpr:
			target(x.X, varRead|varWrite)
		case *syntax.Ident, *syntax.ScopedVar:
			e := x.(syntax.Expr)
			obj := info.Uses[e]
			switch obj.(type) {
			case *check.Var, *check.Builtin:
			default:
				return true
			}
			if _, ok := flags[obj]; !ok {
				order = append(order, obj)
			}
			f, ok := written[e]
			if !ok {
				f = varRead
			}
			flags[obj] |= f
		}
		return true
	})
	var uses []varUse
	for _, obj := range order {
		u := varUse{offset: -1, flags: flags[obj], kind: "scl", scope: "glb"}
		switch o := obj.(type) {
		case *check.Var:
			if o.Kind != check.GlobalVar && o.Kind != check.ThreadVar && o.Kind != check.LocalVar {
				continue
			}
			u.name, u.id, u.typ = o.Name, o.ID, difType(o.Type)
			if o.Keys != nil {
				u.kind = "arr"
			}
			switch {
			case o.Keys != nil:
			case o.Kind == check.GlobalVar:
				if off, ok := spec.GlobalOffsets[o.ID]; ok {
					u.offset = int(off)
				}
			case o.Kind == check.LocalVar:
				if off, ok := spec.LocalOffsets[o.ID]; ok {
					u.offset = int(off)
				}
			default:
				// Each thread-local is a value of its own.
				u.offset = 0
			}
			switch o.Kind {
			case check.ThreadVar:
				u.scope = "tls"
			case check.LocalVar:
				u.scope = "loc"
			}
		case *check.Builtin:
			u.name, u.typ = o.Name, difType(o.Type)
			if d := check.LookupVar(o.Name); d != nil {
				u.id = int(d.ID)
			}
			if o.Array {
				u.kind = "arr"
			}
			if o.Name == "args" {
				// Its type is each probe's own.
				u.typ = "any (unknown) by ref (size 0)"
			}
		}
		uses = append(uses, u)
	}
	return uses
}

// difType describes a variable's type as dtrace's variable table does:
// D type or string, the kind of the type with typedefs resolved, whether
// it is handled by reference, and its size.
func difType(t types.Type) string {
	if t == nil {
		return "any (unknown) by ref (size 0)"
	}
	u := types.Underlying(t)
	kind, ckind, ref := "D type", "unknown", ""
	switch u.Kind() {
	case types.KindString:
		kind, ref = "string", " by ref"
	case types.KindDyn:
		return "any (unknown) by ref (size 0)"
	case types.KindInt:
		ckind = "integer"
	case types.KindFloat:
		ckind = "float"
	case types.KindPointer:
		ckind = "pointer"
	case types.KindArray:
		ckind, ref = "array", " by ref"
	case types.KindStruct:
		ckind, ref = "struct", " by ref"
	case types.KindUnion:
		ckind, ref = "union", " by ref"
	case types.KindEnum:
		ckind = "enum"
	case types.KindFunc:
		ckind = "function"
	}
	return fmt.Sprintf("%s (%s)%s (size %d)", kind, ckind, ref, t.Size())
}
