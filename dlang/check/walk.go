package check

import "github.com/dtrace-go/dtrace/dlang/syntax"

// walkExpr calls f for e and every expression inside it, parents first,
// in source order. Type names are not entered.
func walkExpr(e syntax.Expr, f func(syntax.Expr)) {
	if e == nil {
		return
	}
	f(e)
	switch e := e.(type) {
	case *syntax.ParenExpr:
		walkExpr(e.X, f)
	case *syntax.AggExpr:
		for _, k := range e.Keys {
			walkExpr(k, f)
		}
	case *syntax.UnaryExpr:
		walkExpr(e.X, f)
	case *syntax.PostfixExpr:
		walkExpr(e.X, f)
	case *syntax.BinaryExpr:
		walkExpr(e.X, f)
		walkExpr(e.Y, f)
	case *syntax.AssignExpr:
		walkExpr(e.X, f)
		walkExpr(e.Y, f)
	case *syntax.CondExpr:
		walkExpr(e.Cond, f)
		walkExpr(e.X, f)
		walkExpr(e.Y, f)
	case *syntax.CastExpr:
		walkExpr(e.X, f)
	case *syntax.SizeofExpr:
		walkExpr(e.X, f)
	case *syntax.StringofExpr:
		walkExpr(e.X, f)
	case *syntax.XlateExpr:
		walkExpr(e.X, f)
	case *syntax.CallExpr:
		walkExpr(e.Fun, f)
		for _, a := range e.Args {
			walkExpr(a, f)
		}
	case *syntax.IndexExpr:
		walkExpr(e.X, f)
		for _, a := range e.Index {
			walkExpr(a, f)
		}
	case *syntax.MemberExpr:
		walkExpr(e.X, f)
	case *syntax.ScopedVar:
	}
}

// walkStmts calls f for every expression in the statements.
func walkStmts(list []syntax.Stmt, f func(syntax.Expr)) {
	for _, s := range list {
		switch s := s.(type) {
		case *syntax.ExprStmt:
			walkExpr(s.X, f)
		case *syntax.BlockStmt:
			walkStmts(s.List, f)
		case *syntax.IfStmt:
			walkExpr(s.Cond, f)
			if s.Then != nil {
				walkStmts([]syntax.Stmt{s.Then}, f)
			}
			if s.Else != nil {
				walkStmts([]syntax.Stmt{s.Else}, f)
			}
		}
	}
}

// parseTimeChecks reports the errors dtrace's parser raises while it
// builds a clause, before any clause is checked: a call of something that
// is not a name (D_FUNC_IDENT).
func (c *checker) parseTimeChecks(d *syntax.ProbeClause) {
	var exprs []syntax.Expr
	collect := func(e syntax.Expr) { exprs = append(exprs, e) }
	walkExpr(d.Pred, collect)
	if d.Body != nil {
		walkStmts(d.Body.List, collect)
	}
	// Report the innermost, earliest-built call first, as the parser
	// builds nodes bottom-up.
	var bad syntax.Expr
	for _, e := range exprs {
		if call, ok := e.(*syntax.CallExpr); ok {
			if _, ok := unparen(call.Fun).(*syntax.Ident); !ok {
				if bad == nil || call.End() < bad.End() {
					bad = call
				}
			}
		}
	}
	if bad != nil {
		c.errorf(c.last(bad), D_FUNC_IDENT, "function designator is not of function type")
	}
}
