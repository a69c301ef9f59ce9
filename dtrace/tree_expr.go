// The nodes of expressions for -x tree (tree.go).

package dtrace

import (
	"fmt"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// expr builds the node of an expression.
func (d *treeDumper) expr(e syntax.Expr) *tnode {
	e = unparen(e)
	if v, t, ok := d.folded(e); ok {
		n := &tnode{kind: tnInt, value: v, attr: check.DefaultAttr}
		d.setType(n, t)
		return n
	}
	var n *tnode
	switch e := e.(type) {
	case *syntax.StringLit:
		n = &tnode{kind: tnString, text: e.Value, flags: nfDptr}
		d.setType(n, d.info.Types[e].Type)
		n.attr = check.DefaultAttr
		return n
	case *syntax.MacroVar:
		tv := d.info.Types[e]
		if tv.Value != nil && tv.Value.IsStr {
			n = &tnode{kind: tnString, text: tv.Value.Str, flags: nfDptr, attr: check.DefaultAttr}
			d.setType(n, tv.Type)
			return n
		}
		n = &tnode{kind: tnIdent, text: "$" + e.Name}
	case *syntax.Ident:
		n = d.ident(e)
	case *syntax.ScopedVar:
		n = d.scoped(e)
	case *syntax.AggExpr:
		n = d.agg(e, nil)
	case *syntax.UnaryExpr:
		n = d.op(e.Op.String(), e, e.X)
	case *syntax.PostfixExpr:
		n = d.op(e.Op.String(), e, e.X)
	case *syntax.BinaryExpr:
		n = d.op(e.Op.String(), e, e.X, e.Y)
	case *syntax.AssignExpr:
		if ag, ok := unparen(e.X).(*syntax.AggExpr); ok && d.cooked && e.Op == syntax.ASSIGN {
			return d.agg(ag, e.Y)
		}
		n = d.op(e.Op.String(), e, e.X, e.Y)
		if d.cooked {
			// dtrace gives the assignment the left operand's flags
			// but LVAL.
			l := n.kids[0]
			n.flags = l.flags &^ nfLvalue
		}
	case *syntax.CondExpr:
		if v, _, ok := d.fold(e.Cond, false); ok {
			// dt_node_op3() keeps the branch a constant selects.
			if v != 0 {
				return d.expr(e.X)
			}
			return d.expr(e.Y)
		}
		n = d.op("", e, e.Cond, e.X, e.Y)
		n.kind = tnOp3
	case *syntax.CastExpr:
		n = d.op("(", e, nil, e.X)
		n.kids[0] = d.typeNode(e.Type)
	case *syntax.SizeofExpr:
		if e.Type != nil {
			n = d.op("sizeof", e, nil)
			n.kids = []*tnode{d.typeNode(e.Type)}
		} else {
			n = d.op("sizeof", e, e.X)
		}
	case *syntax.StringofExpr:
		n = d.op("stringof", e, e.X)
	case *syntax.OffsetofExpr:
		n = d.op("offsetof", e, nil)
		n.kids = []*tnode{d.typeNode(e.Type)}
	case *syntax.XlateExpr:
		n = d.op("xlate", e, nil, e.X)
		n.kids[0] = d.typeNode(e.Type)
		if d.cooked {
			// Translated data is <DYN> (dt_cook_op2's DT_TOK_XLATE).
			n.typ, n.flags = "", 0
			d.setType(n, types.Dyn)
		}
	case *syntax.CallExpr:
		n = d.call(e)
	case *syntax.IndexExpr:
		n = d.index(e)
	case *syntax.MemberExpr:
		op := "."
		if e.Arrow {
			op = "->"
		}
		n = d.op(op, e, e.X, nil)
		// The member name stays an uncooked identifier.
		n.kids[1] = &tnode{kind: tnIdent, text: e.Name.Name, attr: check.DefaultAttr}
		if d.cooked && n.kids[0].flags&nfWritable != 0 {
			n.flags |= nfWritable
		}
	default:
		n = &tnode{kind: tnIdent, text: fmt.Sprintf("<%T>", e)}
	}
	if n.attr == (check.Attr{}) {
		n.attr = check.DefaultAttr
	}
	if d.cooked && d.info.Types[e].Alloca {
		n.flags |= nfAlloca // points into alloca()ed scratch memory
	}
	return n
}

// op builds an OP1/OP2/OP3 node of the operands given (nil: filled in by
// the caller), typed once cooked; its attributes are its operands' least.
func (d *treeDumper) op(op string, e syntax.Expr, operands ...syntax.Expr) *tnode {
	kinds := []tnKind{tnOp1, tnOp1, tnOp2, tnOp3}
	n := &tnode{kind: kinds[len(operands)], text: op, attr: check.DefaultAttr}
	for _, x := range operands {
		if x == nil {
			n.kids = append(n.kids, nil)
			continue
		}
		k := d.expr(x)
		n.kids = append(n.kids, k)
		n.attr = check.MinAttr(n.attr, k.attr)
	}
	if d.cooked {
		tv := d.info.Types[e]
		d.setType(n, tv.Type)
		if tv.Lvalue {
			n.flags |= nfLvalue
		}
		if op == "*" && len(operands) == 1 && n.kids[0] != nil && n.kids[0].flags&nfWritable != 0 {
			n.flags |= nfWritable
		}
	}
	return n
}

// typeNode builds the TYPE node of a type name.
func (d *treeDumper) typeNode(tn *syntax.TypeName) *tnode {
	n := &tnode{kind: tnType, attr: check.DefaultAttr}
	if t := d.info.TypeNames[tn]; t != nil {
		d.setType(n, t)
		if check.IsKernelType(t) {
			n.attr = check.SymbolAttr
		}
	}
	return n
}

// ident builds an identifier: IDENT as parsed; once cooked a VARIABLE,
// SYMBOL, INLINE or constant.
func (d *treeDumper) ident(e *syntax.Ident) *tnode {
	name := e.Name
	if e.Scoped {
		name = e.Module + "`" + e.Name
	}
	if !d.cooked {
		return &tnode{kind: tnIdent, text: name, attr: check.DefaultAttr}
	}
	tv := d.info.Types[e]
	switch o := d.info.Uses[e].(type) {
	case *check.Var:
		t := tv.Type
		if len(o.Keys) > 0 {
			t = types.Dyn // an associative array not indexed
		}
		return d.variable(o, e, t, "")
	case *check.Builtin:
		n := &tnode{kind: tnVar, text: o.Name, attr: check.DefaultAttr}
		if def := check.LookupVar(o.Name); def != nil {
			n.attr = def.Attr(d.ctx)
		}
		d.setType(n, tv.Type)
		n.flags |= nfLvalue
		if n.flags&nfRef != 0 && !isString(tv.Type) && o.Name != "args" && o.Name != "execname" {
			n.flags |= nfDptr
		}
		return n
	case *check.Symbol:
		n := &tnode{kind: tnSym, text: o.Module + "`" + o.Name, attr: check.SymbolAttr, flags: nfLvalue}
		d.setType(n, tv.Type)
		return n
	case *check.Inline:
		n := &tnode{kind: tnInline, text: o.Name, attr: check.DefaultAttr}
		d.setType(n, tv.Type)
		if o.Value != nil {
			k := d.expr(o.Value)
			n.kids = []*tnode{k}
			n.attr = k.attr
		}
		return n
	case *check.EnumConst:
		n := &tnode{kind: tnInt, value: uint64(o.Value), attr: check.DefaultAttr}
		d.setType(n, tv.Type)
		return n
	}
	n := &tnode{kind: tnIdent, text: name, attr: check.DefaultAttr}
	d.setType(n, tv.Type)
	return n
}

func isString(t types.Type) bool {
	if t == nil {
		return false
	}
	_, ok := types.Underlying(t).(*types.String)
	return ok
}

// variable builds the VARIABLE node of a D variable referenced by ref,
// of type t.
func (d *treeDumper) variable(v *check.Var, ref syntax.Expr, t types.Type, scope string) *tnode {
	n := &tnode{kind: tnVar, text: v.Name, attr: check.DefaultAttr}
	switch {
	case v.Alloca:
		n.prefix = "(alloca-assigned) "
	case d.assigned[v]:
		n.prefix = "(normally-assigned) "
	}
	n.prefix += scope
	if t == nil {
		t = v.Type
	}
	d.setType(n, t)
	n.flags |= nfLvalue | nfWritable
	// dtrace marks a REF-typed variable as DTrace memory (DPTR), strings
	// only where it creates the variable (its first reference).
	created := !v.Declared && d.creating[v] == ref
	if n.flags&nfRef != 0 && (created || !isString(t)) {
		n.flags |= nfDptr
	}
	return n
}

// scoped builds self->x, this->x (and flow->x): as parsed an OP2 -> of
// two identifiers, once cooked the variable.
func (d *treeDumper) scoped(e *syntax.ScopedVar) *tnode {
	scope := map[syntax.VarScope]string{syntax.ScopeSelf: "self", syntax.ScopeThis: "this", syntax.ScopeFlow: "flow"}[e.Scope]
	if d.cooked {
		if v, ok := d.info.Uses[e].(*check.Var); ok {
			return d.variable(v, e, d.info.Types[e].Type, scope+"->")
		}
	}
	return &tnode{kind: tnOp2, text: "->", attr: check.DefaultAttr, kids: []*tnode{
		{kind: tnIdent, text: scope, attr: check.DefaultAttr},
		{kind: tnIdent, text: e.Name.Name, attr: check.DefaultAttr},
	}}
}

// agg builds an aggregation: as parsed an identifier (indexed by OP2 [),
// once cooked an AGGREGATE with its tuple and, assigned, its function.
func (d *treeDumper) agg(e *syntax.AggExpr, fun syntax.Expr) *tnode {
	if !d.cooked {
		id := &tnode{kind: tnIdent, text: "@" + e.Name, attr: check.DefaultAttr}
		if e.Keys == nil {
			return id
		}
		// dtrace's OP2 [ holds the key list as its right operand, and
		// dt_node_printr() prints the first of the list.
		return &tnode{kind: tnOp2, text: "[", attr: check.DefaultAttr, kids: []*tnode{id, d.expr(e.Keys[0])}}
	}
	n := &tnode{kind: tnAgg, text: e.Name, attr: check.DefaultAttr}
	for _, k := range e.Keys {
		kn := d.expr(k)
		n.args = append(n.args, kn)
		n.attr = check.MinAttr(n.attr, kn.attr)
	}
	if fun != nil {
		n.aggfun = d.expr(fun)
	}
	return n
}

// call builds a FUNC node. An aggregating function's result is <DYN>.
func (d *treeDumper) call(e *syntax.CallExpr) *tnode {
	name := ""
	if id, ok := e.Fun.(*syntax.Ident); ok {
		name = id.Name
	}
	n := &tnode{kind: tnFunc, text: name, attr: check.DefaultAttr}
	a := check.DefaultAttr
	for _, x := range e.Args {
		k := d.expr(x)
		n.args = append(n.args, k)
		a = check.MinAttr(a, k.attr)
	}
	if !d.cooked {
		return n
	}
	if fd := check.LookupFunc(name); fd != nil {
		a = check.MinAttr(a, fd.Attr())
	}
	n.attr = a
	t := d.info.Types[e].Type
	if fn := d.info.Calls[e]; fn != nil && fn.Kind == check.AggFunc {
		t = types.Dyn
	}
	d.setType(n, t)
	return n
}

// index builds x[i, ...]: as parsed an OP2 [ (printing the first index),
// once cooked the array variable (or args[]) with its index list.
func (d *treeDumper) index(e *syntax.IndexExpr) *tnode {
	if d.cooked {
		x := unparen(e.X)
		var v *tnode
		switch o := d.info.Uses[x].(type) {
		case *check.Var:
			if len(o.Keys) > 0 {
				scope := ""
				if sv, ok := x.(*syntax.ScopedVar); ok && sv.Scope == syntax.ScopeSelf {
					scope = "self->"
				}
				v = d.variable(o, x, d.info.Types[e].Type, scope)
			}
		case *check.Builtin:
			if o.Array {
				v = d.ident(x.(*syntax.Ident))
				v.typ, v.flags = "", nfLvalue
				d.setType(v, d.info.Types[e].Type)
			}
		}
		if v != nil {
			v.flags &^= nfDptr // an associative array cannot return a DPTR
			for _, k := range e.Index {
				kn := d.expr(k)
				v.args = append(v.args, kn)
				v.attr = check.MinAttr(v.attr, kn.attr)
			}
			return v
		}
	}
	var first syntax.Expr
	if len(e.Index) > 0 {
		first = e.Index[0]
	}
	if !d.cooked || len(e.Index) != 1 {
		return d.op("[", e, e.X, first)
	}
	// Cooking makes E1[E2] *((E1)+(E2)) (K&R A7.3.1).
	sum := d.op("+", e.X, e.X, first)
	sum.typ, sum.flags = "", sum.kids[0].flags&nfAlloca
	if xt := d.info.Types[e.X].Type; xt != nil {
		if a, ok := types.Underlying(xt).(*types.Array); ok {
			xt = types.NewPointer(a.Elem)
		}
		d.setType(sum, xt)
	}
	n := &tnode{kind: tnOp1, text: "*", attr: sum.attr, kids: []*tnode{sum}}
	tv := d.info.Types[e]
	d.setType(n, tv.Type)
	if tv.Lvalue {
		n.flags |= nfLvalue
	}
	return n
}
