package check

import (
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// parseTimeChecks reports the errors dtrace's parser raises while it
// builds a clause, before any clause is checked: a call of something that
// is not a name (D_FUNC_IDENT) and a division by a constant zero
// (D_DIV_ZERO). The parser builds nodes bottom-up, so the error of the
// node that ends first is reported.
func (c *checker) parseTimeChecks(d *syntax.ProbeClause) {
	// The expressions of the predicate and the statements, parents
	// first, in source order.
	var exprs []syntax.Expr
	collect := func(n syntax.Node) bool {
		if e, ok := n.(syntax.Expr); ok {
			exprs = append(exprs, e)
		}
		return true
	}
	syntax.InspectCode(d.Pred, collect)
	syntax.InspectCode(d.Body, collect)
	var bad syntax.Expr
	var tag Tag
	found := func(e syntax.Expr, t Tag) {
		if bad == nil || e.End() < bad.End() {
			bad, tag = e, t
		}
	}
	for _, e := range exprs {
		switch e := e.(type) {
		case *syntax.CallExpr:
			if _, ok := syntax.Unparen(e.Fun).(*syntax.Ident); !ok {
				found(e, D_FUNC_IDENT)
			}
		case *syntax.BinaryExpr:
			if e.Op == syntax.QUO || e.Op == syntax.REM {
				if v, ok := literalValue(e.Y); ok && v == 0 {
					found(e, D_DIV_ZERO)
				}
			}
		case *syntax.AssignExpr:
			if e.Op == syntax.QUOASS || e.Op == syntax.REMASS {
				if v, ok := literalValue(e.Y); ok && v == 0 {
					found(e, D_DIV_ZERO)
				}
			}
		}
	}
	switch tag {
	case D_FUNC_IDENT:
		c.errorf(c.last(bad), D_FUNC_IDENT, "function designator is not of function type")
	case D_DIV_ZERO:
		c.errorf(c.after(bad), D_DIV_ZERO, "expression contains division by zero")
	}
}

// literalValue folds an expression made of integer literals only, as
// dtrace's parser does while it builds the tree.
func literalValue(e syntax.Expr) (uint64, bool) {
	switch e := e.(type) {
	case *syntax.IntLit:
		return e.Value, !e.Overflow
	case *syntax.ParenExpr:
		return literalValue(e.X)
	case *syntax.UnaryExpr:
		v, ok := literalValue(e.X)
		if !ok {
			return 0, false
		}
		switch e.Op {
		case syntax.SUB:
			return -v, true
		case syntax.ADD:
			return v, true
		case syntax.BNEG:
			return ^v, true
		case syntax.NOT:
			if v == 0 {
				return 1, true
			}
			return 0, true
		}
	case *syntax.BinaryExpr:
		x, ok1 := literalValue(e.X)
		y, ok2 := literalValue(e.Y)
		if !ok1 || !ok2 {
			return 0, false
		}
		switch e.Op {
		case syntax.ADD, syntax.SUB, syntax.MUL, syntax.AND, syntax.OR, syntax.XOR, syntax.SHL:
			// In 64 bits, as the checker folds them.
			v, _, _ := foldBinary(e.Op, TypeAndValue{Value: intConst(int64(x))}, TypeAndValue{Value: intConst(int64(y))}, types.Long)
			return uint64(v.Int), true
		}
	}
	return 0, false
}
