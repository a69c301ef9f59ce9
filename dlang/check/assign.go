package check

import (
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// argCompat is dtrace's dt_node_is_argcompat: may a value of y's type be
// passed or assigned where lt is expected?
func (c *checker) argCompat(lt types.Type, ye syntax.Expr, y TypeAndValue) bool {
	if isInt(lt) && isInt(y.Type) {
		return true
	}
	if isStrCompat(lt) && isStrCompat(y.Type) {
		return true
	}
	lk, yk := types.Underlying(lt).Kind(), types.Underlying(y.Type).Kind()
	for _, k := range []types.Kind{types.KindStack, types.KindSymaddr, types.KindUsymaddr} {
		if lk == k && yk == k {
			return true
		}
	}
	switch lk {
	case types.KindFunc, types.KindStruct, types.KindUnion:
		return types.Identical(lt, y.Type)
	case types.KindOpaque:
		return yk == types.KindOpaque && types.Identical(lt, y.Type) || types.IsPointer(y.Type)
	}
	if lk == types.KindPointer {
		if e := types.Underlying(types.Elem(lt)); e.Kind() == types.KindOpaque && isPtrLike(y.Type) {
			return true // no kernel types: accept any pointer
		}
	}
	return c.ptrCompat(nil, TypeAndValue{Type: lt}, ye, y)
}

// assign checks `x = y` and the compound assignments.
func (c *checker) assign(e *syntax.AssignExpr) TypeAndValue {
	if agg, ok := syntax.Unparen(e.X).(*syntax.AggExpr); ok {
		if e.Op != syntax.ASSIGN {
			return c.fail(c.after(e), D_OP_LVAL, "operator %s requires modifiable lvalue as an operand", opstr(e.Op))
		}
		return c.aggAssign(e, agg)
	}
	c.fresh = nil
	x := c.exprx(e.X, true)
	fresh := c.fresh
	c.fresh = nil
	if x.Type == nil && fresh == nil {
		return bad
	}
	if fresh != nil && e.Op != syntax.ASSIGN {
		return c.fail(c.after(e.X), D_VAR_UNDEF, "%s has not yet been declared or assigned", exprName(e.X))
	}
	y := c.expr(e.Y)
	if y.Type == nil {
		return bad
	}
	if c.flags[e.Y].action {
		return c.fail(c.after(e), D_OP_ACT, "operator %s operands cannot be actions", opstr(e.Op))
	}
	if e.Op == syntax.ASSIGN && !c.allocaAssign(e, y) {
		return bad
	}
	if fresh != nil {
		t := y.Type
		if types.IsVoid(t) {
			return c.fail(c.after(e), D_OP_INCOMPAT, "operands have incompatible types: \"%s\" %s \"%s\"", "void", opstr(e.Op), "void")
		}
		if types.IsCharArray(t) || types.IsString(t) || (y.Value != nil && y.Value.IsStr) {
			t = c.strType
		}
		fresh.Type = t
		fresh.Size = t.Size()
		x = c.record(e.X, TypeAndValue{Type: t, Lvalue: true}, c.flags[e.X])
		if p, ok := e.X.(*syntax.ParenExpr); ok {
			c.record(p.X, x, c.flags[p.X])
		}
	}
	fl := c.flags[e.X]
	if !x.Lvalue {
		return c.fail(c.after(e), D_OP_LVAL, "operator %s requires modifiable lvalue as an operand", opstr(e.Op))
	}
	if !fl.writable {
		return c.fail(c.after(e), D_OP_WRITE, "operator %s can only be applied to a writable variable", opstr(e.Op))
	}
	switch e.Op {
	case syntax.ASSIGN:
		if !types.IsString(x.Type) {
			if k := types.Underlying(x.Type).Kind(); k == types.KindArray || k == types.KindFunc {
				return c.fail(c.after(e), D_OP_ARRFUN, "operator %s may not be applied to operand of type \"%s\"", opstr(e.Op), types.TypeString(x.Type))
			}
		}
		if !c.argCompat(x.Type, e.Y, y) {
			zero := false
			if _, lit := syntax.Unparen(e.Y).(*syntax.IntLit); lit && y.Value != nil && y.Value.Int == 0 {
				if v, ok := c.info.Uses[baseVar(e.X)].(*Var); ok && (v.Keys != nil || v.Kind == ThreadVar) {
					zero = true
				}
			}
			if !zero {
				return c.fail(c.after(e), D_OP_INCOMPAT, "operands have incompatible types: \"%s\" %s \"%s\"",
					types.TypeString(x.Type), opstr(e.Op), types.TypeString(y.Type))
			}
		}
	case syntax.ADDASS, syntax.SUBASS:
		xp := isPtrLike(x.Type) && !isVoidFuncPtr(x.Type)
		if !(isInt(x.Type) && isInt(y.Type)) && !(xp && isInt(y.Type)) {
			if isVoidFuncPtr(x.Type) {
				return c.fail(c.after(e), D_OP_VFPTR, "operator %s requires left-hand scalar operand of known size", opstr(e.Op))
			}
			if isVoidFuncPtr(y.Type) {
				return c.fail(c.after(e), D_OP_VFPTR, "operator %s requires left-hand scalar operand of known size", opstr(e.Op))
			}
			return c.fail(c.after(e), D_OP_INCOMPAT, "operands have incompatible types: \"%s\" %s \"%s\"",
				types.TypeString(x.Type), opstr(e.Op), types.TypeString(y.Type))
		}
	case syntax.MULASS, syntax.QUOASS:
		if !isInt(x.Type) || !isInt(y.Type) {
			return c.fail(c.after(e), D_OP_ARITH, "operator %s requires operands of arithmetic type", opstr(e.Op))
		}
	default:
		if !isInt(x.Type) || !isInt(y.Type) {
			return c.fail(c.after(e), D_OP_INT, "operator %s requires operands of integral type", opstr(e.Op))
		}
	}
	if (e.Op == syntax.QUOASS || e.Op == syntax.REMASS) && y.Value != nil && !y.Value.IsStr && y.Value.Int == 0 {
		return c.fail(c.after(e), D_DIV_ZERO, "expression contains division by zero")
	}
	return c.record(e, TypeAndValue{Type: x.Type}, exprFlags{})
}

// allocaAssign applies dtrace's rules on variables that hold alloca()
// pointers: a variable holds either alloca pointers or other pointers,
// never both, and a ?: mixing them may not be assigned.
func (c *checker) allocaAssign(e *syntax.AssignExpr, y TypeAndValue) bool {
	if c.flags[e.Y].mixed {
		c.errorf(c.after(e), D_ALLOCA_INCOMPAT, "ternary conditional with alloca and non-alloca branches cannot be assigned to a variable")
		return false
	}
	v, ok := c.info.Uses[syntax.Unparen(e.X)].(*Var)
	if !ok || !isPtrLike(y.Type) {
		return true
	}
	if y.Alloca && !v.Alloca && c.nonAlloca[v] || !y.Alloca && v.Alloca {
		c.errorf(c.after(e), D_ALLOCA_INCOMPAT, "%s: cannot reuse the same identifier for both alloca and non-alloca allocations", v.Name)
		return false
	}
	if y.Alloca {
		v.Alloca = true
	} else {
		c.nonAlloca[v] = true
	}
	return true
}

// baseVar returns the variable node under an index expression.
func baseVar(e syntax.Expr) syntax.Expr {
	e = syntax.Unparen(e)
	if ix, ok := e.(*syntax.IndexExpr); ok {
		return syntax.Unparen(ix.X)
	}
	return e
}

// index checks x[i] and a[k1, k2, ...].
func (c *checker) index(e *syntax.IndexExpr, lhs bool) TypeAndValue {
	switch x := syntax.Unparen(e.X).(type) {
	case *syntax.Ident:
		if x.Scoped {
			break
		}
		if b, ok := c.builtins[x.Name]; ok && b.Array {
			return c.builtinIndex(e, x, b)
		}
		if v, ok := c.globals[x.Name]; ok && v.Keys != nil {
			return c.assocRef(e, x, v)
		}
		if in, ok := c.inlines[x.Name]; ok && in.Params != nil {
			c.info.Uses[x] = in
			c.record(x, TypeAndValue{Type: types.Dyn}, exprFlags{})
			keys := make([]types.Type, len(in.Params))
			for i, p := range in.Params {
				keys[i] = p.Type
			}
			if !c.checkKeys(c.last(e), x.Name+"[ ]", "", e.Index, keys, "inline") {
				return bad
			}
			return c.record(e, TypeAndValue{Type: in.Type}, exprFlags{})
		}
		if _, ok := c.globals[x.Name]; ok {
			break
		}
		if _, ok := c.builtins[x.Name]; ok {
			break
		}
		if _, ok := c.inlines[x.Name]; ok {
			break
		}
		if _, ok := c.enumConsts[x.Name]; ok {
			break
		}
		if _, ok := c.kernelSymbolRead(x.Name, lhs); ok {
			break
		}
		if !lhs {
			return c.fail(c.after(x), D_IDENT_UNDEF, "failed to resolve %s: Unknown variable name", x.Name)
		}
		keys, ok := c.keyTypes(e)
		if !ok {
			return bad
		}
		v := c.newVar(x.Name, GlobalVar, nil, keys, x.Pos())
		c.globals[x.Name] = v
		c.fresh = v
		c.use(x, v)
		c.record(x, TypeAndValue{Type: types.Dyn}, exprFlags{isVar: true, writable: true})
		return c.record(e, TypeAndValue{Lvalue: true}, exprFlags{writable: true})
	case *syntax.ScopedVar:
		tab, kind, prefix := c.scopeTable(x.Scope)
		v, ok := tab[x.Name.Name]
		if ok && v.Keys != nil {
			return c.assocRef(e, x, v)
		}
		if ok && v.Type != nil {
			break
		}
		if kind == LocalVar {
			return c.fail(c.last(e), D_ARR_LOCAL, "local variables may not be used as associative arrays: %s", x.Name.Name)
		}
		if kind == FlowVar {
			// A flow's variables are copied whole as work moves: a
			// fixed set of scalars, not tables.
			return c.fail(c.last(e), D_ARR_LOCAL, "flow variables may not be used as associative arrays: %s", x.Name.Name)
		}
		if !lhs {
			return c.fail(c.after(x), D_VAR_UNDEF, "%s%s has not yet been declared or assigned", prefix, x.Name.Name)
		}
		keys, ok2 := c.keyTypes(e)
		if !ok2 {
			return bad
		}
		v = c.newVar(x.Name.Name, kind, nil, keys, x.Pos())
		tab[x.Name.Name] = v
		c.fresh = v
		c.use(x, v)
		c.record(x, TypeAndValue{Type: types.Dyn}, exprFlags{isVar: true, writable: true})
		return c.record(e, TypeAndValue{Lvalue: true}, exprFlags{writable: true})
	case *syntax.AggExpr:
		return c.fail(c.last(e), D_AGG_MDIM, "improper attempt to reference @%s as a multi-dimensional array", x.Name)
	}
	// A C array or pointer.
	a := c.expr(e.X)
	if a.Type == nil {
		return bad
	}
	elem := types.Elem(a.Type)
	switch u := types.Underlying(a.Type).(type) {
	case *types.Pointer, *types.Array:
	case *types.String:
		elem = types.Char
	case *types.Special:
		if u.K != types.KindOpaque {
			return c.fail(c.last(e), D_ARR_BADREF, "cannot access %s as an associative array", exprName(e.X))
		}
		elem = u
	default:
		return c.fail(c.last(e), D_ARR_BADREF, "cannot access %s as an associative array", c.nodeName(e.X))
	}
	if len(e.Index) != 1 {
		return c.fail(c.last(e), D_ARR_BADREF, "cannot access %s as an associative array", c.nodeName(e.X))
	}
	i := c.expr(e.Index[0])
	if i.Type == nil {
		return bad
	}
	if !isInt(i.Type) {
		return c.fail(c.last(e), D_OP_INCOMPAT, "operands have incompatible types: \"%s\" + \"%s\"", types.TypeString(a.Type), types.TypeString(i.Type))
	}
	if arr, ok := types.Underlying(a.Type).(*types.Array); ok && i.Value != nil && arr.Len > 1 && uint64(i.Value.Int) >= uint64(arr.Len) {
		return c.fail(c.last(e), D_ARR_BOUNDS, "index outside array bounds: %d, max is %d", uint64(i.Value.Int), arr.Len)
	}
	if types.IsVoid(elem) {
		return c.fail(c.last(e), D_DEREF_VOID, "cannot dereference pointer to void")
	}
	return c.record(e, TypeAndValue{Type: elem, Lvalue: !types.IsArray(elem)}, exprFlags{writable: c.flags[e.X].writable || types.IsPointer(a.Type), inAlloca: a.Alloca})
}

// nodeName names an expression as dtrace's dt_node_name does.
func (c *checker) nodeName(e syntax.Expr) string {
	switch o := c.info.Uses[syntax.Unparen(e)].(type) {
	case *Var:
		if o.Keys != nil {
			return "associative array " + exprName(e)
		}
		return "scalar " + exprName(e)
	case *Builtin:
		return "scalar " + o.Name
	}
	return exprName(e)
}

// exprName names an expression in messages the way dtrace does for
// identifiers.
func exprName(e syntax.Expr) string {
	switch e := syntax.Unparen(e).(type) {
	case *syntax.Ident:
		return e.Name
	case *syntax.ScopedVar:
		return e.Scope.String() + "->" + e.Name.Name
	}
	return "expression"
}

// keyTypes checks the keys of a new associative array and returns their
// types.
func (c *checker) keyTypes(e *syntax.IndexExpr) ([]types.Type, bool) {
	keys := make([]types.Type, 0, len(e.Index))
	for i, k := range e.Index {
		tv := c.expr(k)
		if tv.Type == nil {
			return nil, false
		}
		if !c.keyOK(k, tv, i, "associative array") {
			return nil, false
		}
		t := tv.Type
		if types.IsCharArray(t) || (tv.Value != nil && tv.Value.IsStr) {
			t = c.strType
		}
		keys = append(keys, t)
	}
	return keys, true
}

// keyOK rejects keys that cannot index an array or aggregation.
func (c *checker) keyOK(k syntax.Expr, tv TypeAndValue, i int, kind string) bool {
	switch types.Underlying(tv.Type).Kind() {
	case types.KindVoid, types.KindDyn, types.KindFunc, types.KindAgg:
		c.errorf(c.after(k), D_KEY_TYPE, "%s expression may not be used as %s index: key #%d", types.TypeString(tv.Type), kind, i+1)
		return false
	}
	if n := c.dynamicName(k); n != "" {
		c.errorf(c.after(k), D_KEY_TYPE, "%s expression may not be used as %s index: key #%d", n, kind, i+1)
		return false
	}
	if c.flags[k].action {
		c.errorf(c.after(k), D_KEY_TYPE, "%s expression may not be used as %s index: key #%d", types.TypeString(tv.Type), kind, i+1)
		return false
	}
	return true
}

// assocRef checks a reference to an existing associative array.
func (c *checker) assocRef(e *syntax.IndexExpr, x syntax.Expr, v *Var) TypeAndValue {
	c.use(x, v)
	c.record(x, TypeAndValue{Type: types.Dyn}, exprFlags{isVar: true, writable: true})
	if !c.checkKeys(c.last(e), exprName(x)+"[ ]", "", e.Index, v.Keys, "associative array") {
		return bad
	}
	if v.Type == nil {
		return c.fail(c.last(e), D_VAR_UNDEF, "%s has not yet been declared or assigned", exprName(x))
	}
	return c.record(e, TypeAndValue{Type: v.Type, Lvalue: true}, exprFlags{writable: true, isVar: true})
}

// checkKeys compares index expressions with a key signature, reporting
// D_PROTO_LEN and D_PROTO_ARG as dtrace does for arrays.
func (c *checker) checkKeys(pos syntax.Pos, name, _ string, idx []syntax.Expr, keys []types.Type, kind string) bool {
	tvs := make([]TypeAndValue, len(idx))
	for i, k := range idx {
		tvs[i] = c.expr(k)
		if tvs[i].Type == nil {
			return false
		}
		if !c.keyOK(k, tvs[i], i, kind) {
			return false
		}
	}
	if len(idx) != len(keys) {
		s := "s "
		if len(idx) == 1 {
			s = " "
		}
		c.errorf(pos, D_PROTO_LEN, "%s prototype mismatch: %d key%spassed, %d expected", name, len(idx), s, len(keys))
		return false
	}
	for i, k := range idx {
		if !c.argCompat(keys[i], k, tvs[i]) {
			c.errorf(pos, D_PROTO_ARG, "%s key #%d is incompatible with prototype:\n\tprototype: %s\n\t%9s: %s",
				name, i+1, types.TypeString(keys[i]), "key", types.TypeString(tvs[i].Type))
			return false
		}
	}
	return true
}

// findXlator returns the translator from type in to type out (out may be
// a pointer to the translator's output type, in a pointer to its input).
func (c *checker) findXlator(in, out types.Type) *Translator {
	if p, ok := types.Underlying(out).(*types.Pointer); ok {
		out = p.Elem
	}
	for _, tr := range c.info.Translators {
		if !types.Identical(tr.Out, out) {
			continue
		}
		if types.Identical(tr.In, in) || types.IsPointer(tr.In) && types.IsPointer(in) && types.Identical(types.Elem(tr.In), types.Elem(in)) {
			return tr
		}
	}
	return nil
}

// builtinIndex checks args[N] and uregs[N].
func (c *checker) builtinIndex(e *syntax.IndexExpr, x *syntax.Ident, b *Builtin) TypeAndValue {
	c.info.Uses[x] = b
	if len(e.Index) != 1 {
		s := "s "
		if len(e.Index) == 1 {
			s = " "
		}
		return c.fail(c.last(e), D_PROTO_LEN, "%s[ ] prototype mismatch: %d arg%spassed, 1 expected", x.Name, len(e.Index), s)
	}
	i := c.expr(e.Index[0])
	if i.Type == nil {
		return bad
	}
	if i.Value == nil || i.Value.IsStr || !isInt(i.Type) {
		return c.fail(c.last(e), D_PROTO_ARG, "%s[ ] argument #1 is incompatible with prototype:\n\tprototype: %s\n\t argument: %s", x.Name, "integer constant", types.TypeString(i.Type))
	}
	n := i.Value.Int
	if x.Name == "uregs" {
		if n < 0 || n > 33 {
			return c.fail(c.last(e), D_UNKNOWN, "uregs[]: index out of bounds (%d)", n)
		}
		return c.record(e, TypeAndValue{Type: types.Uint64}, exprFlags{})
	}
	if c.clause == nil {
		return c.fail(c.last(e), D_ARGS_NONE, "%s[ ] may not be referenced outside of a probe clause", x.Name)
	}
	// Without probe information the argument types are unknown.
	t := c.kernelType("<unknown>")
	probe := ""
	if len(c.clause.Probes) > 0 {
		probe = c.clause.Probes[0]
	}
	if c.conf.ProbeArgs != nil && probe != "" {
		if pi := c.conf.ProbeArgs(probe); pi != nil {
			probe = pi.Name
			if n < 0 || n >= int64(len(pi.Args)) {
				return c.fail(c.last(e), D_ARGS_IDX, "index %d is out of range for %s %s[ ]", n, probe, x.Name)
			}
			t = pi.Args[n]
			if n < int64(len(pi.XArgs)) && pi.XArgs[n] != "" {
				xt := c.protoType(pi.XArgs[n])
				if !types.Identical(xt, t) {
					tr := c.findXlator(t, xt)
					if tr == nil {
						// A native type the D library declares
						// (ip.d's void_ip_t) is opaque to the
						// provider's C scopes: look it up again by
						// name among the program's and library's.
						if alt := c.protoType(types.TypeString(t)); alt != nil {
							tr = c.findXlator(alt, xt)
						}
					}
					if tr == nil {
						return c.fail(c.last(e), D_ARGS_XLATOR, "translator for %s[%d] from %s to %s is not defined", x.Name, n, types.TypeString(t), types.TypeString(xt))
					}
					c.info.ArgXlators[e] = tr
					t = xt
				}
			}
		}
	}
	if n < 0 {
		return c.fail(c.last(e), D_ARGS_IDX, "index %d is out of range for %s %s[ ]", n, probe, x.Name)
	}
	return c.record(e, TypeAndValue{Type: t}, exprFlags{})
}
