package codegen

import (
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/program"
)

// This file builds D trees by hand for tests, with a test Info that
// records the types a checker would give them.

type tinfo struct {
	types  map[syntax.Expr]*program.Type
	vars   map[syntax.Expr]*Var
	consts map[syntax.Expr]int64
	aggs   map[*syntax.AggExpr]*AggInfo
	names  map[*syntax.TypeName]*program.Type
	pos    syntax.Pos
}

func newInfo() *tinfo {
	return &tinfo{
		types:  map[syntax.Expr]*program.Type{},
		vars:   map[syntax.Expr]*Var{},
		consts: map[syntax.Expr]int64{},
		aggs:   map[*syntax.AggExpr]*AggInfo{},
		names:  map[*syntax.TypeName]*program.Type{},
		pos:    1,
	}
}

func (ti *tinfo) TypeOf(e syntax.Expr) *program.Type               { return ti.types[e] }
func (ti *tinfo) VarOf(e syntax.Expr) *Var                         { return ti.vars[e] }
func (ti *tinfo) AggOf(e *syntax.AggExpr) *AggInfo                 { return ti.aggs[e] }
func (ti *tinfo) TypeOfName(t *syntax.TypeName) *program.Type      { return ti.names[t] }
func (ti *tinfo) ConstOf(e syntax.Expr) (int64, bool)              { v, ok := ti.consts[e]; return v, ok }
func (ti *tinfo) StrConstOf(e syntax.Expr) (string, bool)          { return "", false }
func (ti *tinfo) Expand(e syntax.Expr) syntax.Expr                 { return nil }
func (ti *tinfo) span() syntax.Span                                { ti.pos++; return syntax.Span{From: ti.pos, To: ti.pos} }
func (ti *tinfo) typed(e syntax.Expr, t *program.Type) syntax.Expr { ti.types[e] = t; return e }

func (ti *tinfo) lit(v int64, t *program.Type) syntax.Expr {
	return ti.typed(&syntax.IntLit{Span: ti.span(), Value: uint64(v)}, t)
}

func (ti *tinfo) str(s string) syntax.Expr {
	return ti.typed(&syntax.StringLit{Span: ti.span(), Value: s}, &program.Type{Kind: program.TString, Size: 256})
}

func isCompare(op syntax.Token) bool {
	switch op {
	case syntax.EQL, syntax.NEQ, syntax.LSS, syntax.GTR, syntax.LEQ, syntax.GEQ, syntax.LAND, syntax.LOR, syntax.LXOR:
		return true
	}
	return false
}

func (ti *tinfo) bin(op syntax.Token, x, y syntax.Expr) syntax.Expr {
	e := &syntax.BinaryExpr{Span: ti.span(), Op: op, X: x, Y: y}
	tx, ty := ti.types[x], ti.types[y]
	var t *program.Type
	switch {
	case isCompare(op):
		t = program.TypeInt
	case op == syntax.SHL || op == syntax.SHR:
		t = promote(tx)
	case op == syntax.COMMA:
		t = ty
	case tx.Kind == program.TPointer:
		t = tx
		if ty.Kind == program.TPointer {
			t = program.TypeLong
		}
	case ty.Kind == program.TPointer:
		t = ty
	default:
		t = arith(tx, ty)
	}
	return ti.typed(e, t)
}

func (ti *tinfo) un(op syntax.Token, x syntax.Expr) syntax.Expr {
	e := &syntax.UnaryExpr{Span: ti.span(), Op: op, X: x}
	t := promote(ti.types[x])
	if op == syntax.NOT {
		t = program.TypeInt
	}
	if op == syntax.MUL {
		t = ti.types[x].Elem
	}
	return ti.typed(e, t)
}

func (ti *tinfo) cast(t *program.Type, x syntax.Expr) syntax.Expr {
	return ti.typed(&syntax.CastExpr{Span: ti.span(), X: x}, t)
}

func (ti *tinfo) cond(c, x, y syntax.Expr) syntax.Expr {
	return ti.typed(&syntax.CondExpr{Span: ti.span(), Cond: c, X: x, Y: y}, arith(ti.types[x], ti.types[y]))
}

func (ti *tinfo) paren(x syntax.Expr) syntax.Expr {
	return ti.typed(&syntax.ParenExpr{Span: ti.span(), X: x}, ti.types[x])
}

// variable makes a reference to v (an Ident, or self->/this-> by kind).
func (ti *tinfo) variable(v *Var) syntax.Expr {
	var e syntax.Expr
	switch v.Kind {
	case VarThread:
		e = &syntax.ScopedVar{Span: ti.span(), Scope: syntax.ScopeSelf, Name: &syntax.Ident{Name: v.Name}}
	case VarClause:
		e = &syntax.ScopedVar{Span: ti.span(), Scope: syntax.ScopeThis, Name: &syntax.Ident{Name: v.Name}}
	default:
		e = &syntax.Ident{Span: ti.span(), Name: v.Name}
	}
	ti.vars[e] = v
	return ti.typed(e, v.Type)
}

func (ti *tinfo) assign(op syntax.Token, x, y syntax.Expr) syntax.Expr {
	return ti.typed(&syntax.AssignExpr{Span: ti.span(), Op: op, X: x, Y: y}, ti.types[x])
}

func (ti *tinfo) call(name string, t *program.Type, args ...syntax.Expr) syntax.Expr {
	return ti.typed(&syntax.CallExpr{Span: ti.span(), Fun: &syntax.Ident{Name: name}, Args: args}, t)
}

func (ti *tinfo) agg(ai *AggInfo, keys ...syntax.Expr) *syntax.AggExpr {
	a := &syntax.AggExpr{Span: ti.span(), Name: ai.Name, Keys: keys}
	ti.aggs[a] = ai
	return a
}

func (ti *tinfo) stmt(e syntax.Expr) syntax.Stmt {
	return &syntax.ExprStmt{Span: ti.span(), X: e}
}

func (ti *tinfo) clause(probe string, pred syntax.Expr, body ...syntax.Stmt) *syntax.ProbeClause {
	return &syntax.ProbeClause{Span: ti.span(), Descs: []*syntax.ProbeDesc{{Text: probe}}, Pred: pred,
		Body: &syntax.BlockStmt{List: body}}
}

func progOf(clauses ...*syntax.ProbeClause) *syntax.Program {
	p := &syntax.Program{}
	for _, c := range clauses {
		p.Decls = append(p.Decls, c)
	}
	return p
}
