package dtrace

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// The tree option (-x tree=N, #pragma D option tree=N) prints the parse
// tree of each program compiled to stderr in the form of dtrace's
// dt_node_printr(). N is a mask of compiler passes, as in dt_cc.c:
//
//	1: "Parse tree (Pass 1):", the program as parsed (only literals
//	   and the constants the parser folds have types), from the
//	   PROGRAM node;
//	2: "Parse tree (Pass 2):", each clause once checked ("cooked") in
//	   the context of each of its probe descriptions, from the CLAUSE
//	   node;
//	4: "Parse tree (Pass 3):", the whole checked program.
//
// Each line is built from our syntax tree and the checker's results:
// dtrace's node kind for the construct, the checked type, the stability
// attributes and dtrace's node flags derived from the type (SIGN, REF,
// BITF), from checking (COOK) and from the construct (LVAL, WRITE,
// DPTR).

// Tree passes (bits of the tree option).
const (
	treeParsed  = 1 << 0
	treeChecked = 1 << 1
	treeCodegen = 1 << 2
)

// dtrace's node flags (DT_NF_*), in the order dt_node_printr names them.
const (
	nfSigned = 1 << iota
	nfCooked
	nfRef
	nfLvalue
	nfWritable
	nfBitfield
	nfUserland
	nfAlloca
	nfNonassign
	nfDptr
)

var nfNames = []string{"SIGN", "COOK", "REF", "LVAL", "WRITE", "BITF", "USER", "ALLOCA", "NONASSIGN", "DPTR"}

// Node kinds of dtrace's parse tree that the printer writes.
type tnKind int

const (
	tnInt tnKind = iota
	tnString
	tnIdent
	tnVar
	tnSym
	tnType
	tnFunc
	tnOp1
	tnOp2
	tnOp3
	tnDexpr
	tnDfunc
	tnAgg
	tnPdesc
	tnClause
	tnInline
	tnMember
	tnXlator
	tnProbe
	tnProvider
	tnProg
	tnIf
)

// tnode is one node of dtrace's parse tree as built from ours.
type tnode struct {
	kind    tnKind
	text    string // operator, name, string value, probe description, prefix-free name
	prefix  string // VARIABLE: "(normally-assigned) " and "self->"/"this->"
	value   uint64
	typ     string // "" when the node has no type (printed <-1>)
	attr    check.Attr
	ctxattr check.Attr
	flags   int
	kids    []*tnode // OP1: child; OP2: left, right; OP3: cond, left, right; DEXPR/DFUNC/INLINE: expr
	args    []*tnode // FUNC/VAR arguments, AGG tuple, CLAUSE actions, PROG/PROVIDER/XLATOR list
	pdescs  []*tnode
	pred    *tnode
	aggfun  *tnode
	elses   []*tnode // IF: else actions
}

// treeDumper builds dtrace's view of a program for one pass.
type treeDumper struct {
	info   *check.Info
	conf   *check.Config
	cooked bool
	ctx    check.ProviderAttrs
	// assigned holds the variables dtrace marks normally-assigned
	// (DT_IDFLG_NONALLOCA): given a value not into alloca()ed memory and
	// not a literal 0, in what is cooked so far.
	assigned map[*check.Var]bool
	// creating holds the reference at which dtrace creates each
	// undeclared variable: the first in cooking order.
	creating map[*check.Var]syntax.Expr
}

// dumpTrees prints the program ast at the passes mask names, as dtrace's
// dt_compile() and dt_compile_one_clause() do; info is the checker's
// result over every program compiled so far (ast included).
func dumpTrees(w io.Writer, mask int64, ast *syntax.Program, info *check.Info, conf *check.Config) {
	if mask <= 0 || info == nil {
		return
	}
	d := &treeDumper{info: info, conf: conf, assigned: map[*check.Var]bool{}, creating: map[*check.Var]syntax.Expr{}}
	if mask&treeParsed != 0 {
		fmt.Fprintf(w, "Parse tree (Pass 1):\n")
		writeTnode(w, d.program(ast), 1)
	}
	if mask&(treeChecked|treeCodegen) == 0 {
		return
	}
	d.cooked = true
	d.noteCreating()
	// Variables assigned by the programs checked before this one.
	for _, cl := range info.Clauses {
		if !clauseIn(cl, ast) {
			d.noteAssigned(cl)
		}
	}
	var last check.Attr
	for _, cl := range info.Clauses {
		if !clauseIn(cl, ast) {
			continue
		}
		d.noteAssigned(cl)
		for _, desc := range cl.Probes {
			last = check.DescAttr(conf, desc)
			d.ctx = check.ContextAttrs(conf, desc)
			if mask&treeChecked != 0 {
				n := d.clause(cl)
				n.ctxattr = last
				fmt.Fprintf(w, "Parse tree (Pass 2):\n")
				writeTnode(w, n, 1)
			}
		}
	}
	if mask&treeCodegen != 0 {
		p := d.program(ast)
		for _, n := range p.args {
			if n.kind == tnClause {
				n.ctxattr = last
			}
		}
		fmt.Fprintf(w, "Parse tree (Pass 3):\n")
		writeTnode(w, p, 1)
	}
}

// clauseIn reports whether cl is one of ast's clauses.
func clauseIn(cl *check.Clause, ast *syntax.Program) bool {
	for _, d := range ast.Decls {
		if d == cl.Decl {
			return true
		}
	}
	return false
}

// noteCreating finds the reference that creates each variable: dtrace
// cooks the clauses in order, each one's actions before its predicate,
// an expression's operands from left to right.
func (d *treeDumper) noteCreating() {
	visit := func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.Ident, *syntax.ScopedVar:
			if v, ok := d.info.Uses[n.(syntax.Expr)].(*check.Var); ok && !v.Declared {
				if _, seen := d.creating[v]; !seen {
					d.creating[v] = n.(syntax.Expr)
				}
			}
		}
		return true
	}
	for _, cl := range d.info.Clauses {
		if cl.Body != nil {
			syntax.Inspect(cl.Body, visit)
		}
		if cl.Pred != nil {
			syntax.Inspect(cl.Pred, visit)
		}
	}
}

// noteAssigned records the variables cl's assignments mark
// normally-assigned.
func (d *treeDumper) noteAssigned(cl *check.Clause) {
	visit := func(n syntax.Node) bool {
		a, ok := n.(*syntax.AssignExpr)
		if !ok {
			return true
		}
		x := unparen(a.X)
		if ix, ok := x.(*syntax.IndexExpr); ok {
			x = unparen(ix.X)
		}
		if sv, ok := x.(*syntax.ScopedVar); ok {
			x = sv
		}
		v, ok := d.info.Uses[x].(*check.Var)
		if !ok {
			return true
		}
		tv := d.info.Types[a.Y]
		zero := tv.Value != nil && !tv.Value.IsStr && tv.Value.Int == 0
		if !tv.Alloca && !zero {
			d.assigned[v] = true
		}
		return true
	}
	if cl.Pred != nil {
		syntax.Inspect(cl.Pred, visit)
	}
	if cl.Body != nil {
		syntax.Inspect(cl.Body, visit)
	}
}

func unparen(e syntax.Expr) syntax.Expr {
	for {
		p, ok := e.(*syntax.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// program builds the PROGRAM node: clauses, inlines, translators and
// providers (declarations and pragmas make no node in dtrace).
func (d *treeDumper) program(ast *syntax.Program) *tnode {
	p := &tnode{kind: tnProg, attr: check.DefaultAttr}
	clauses := map[*syntax.ProbeClause]*check.Clause{}
	for _, cl := range d.info.Clauses {
		clauses[cl.Decl] = cl
	}
	for _, decl := range ast.Decls {
		switch decl := decl.(type) {
		case *syntax.ProbeClause:
			if cl := clauses[decl]; cl != nil {
				p.args = append(p.args, d.clause(cl))
			}
		case *syntax.InlineDecl:
			if decl.Decl == nil || decl.Decl.Name == nil {
				continue
			}
			p.args = append(p.args, d.parseCooked().inline(decl))
		case *syntax.TranslatorDecl:
			p.args = append(p.args, d.parseCooked().translator(decl))
		case *syntax.ProviderDecl:
			n := &tnode{kind: tnProvider, text: decl.Name.Name}
			for _, pr := range decl.Probes {
				n.args = append(n.args, &tnode{kind: tnProbe, text: pr.Name.Name})
			}
			p.args = append(p.args, n)
		}
	}
	return p
}

// parseCooked returns a dumper of cooked nodes for what dtrace's parser
// cooks as it reads it: inline definitions and translators.
func (d *treeDumper) parseCooked() *treeDumper {
	if d.cooked {
		return d
	}
	c := *d
	c.cooked = true
	return &c
}

// inline builds an inline definition's INLINE node: its declared type
// and its value.
func (d *treeDumper) inline(decl *syntax.InlineDecl) *tnode {
	n := &tnode{kind: tnInline, text: decl.Decl.Name.Name, attr: check.DefaultAttr}
	if in, ok := d.info.Defs[decl.Decl].(*check.Inline); ok && in.Type != nil {
		d.setType(n, in.Type)
	}
	if decl.Value != nil {
		n.kids = []*tnode{d.expr(decl.Value)}
	}
	return n
}

// translator builds an XLATOR node (of type <DYN>) with a MEMBER of the
// output member's type for each member.
func (d *treeDumper) translator(decl *syntax.TranslatorDecl) *tnode {
	n := &tnode{kind: tnXlator, attr: check.DefaultAttr}
	d.setType(n, types.Dyn)
	var out *types.Struct
	for _, x := range d.info.Translators {
		if x.Decl != decl {
			continue
		}
		n.text = " from <" + typeName(x.In) + "> to <" + typeName(x.Out) + ">"
		out, _ = types.Underlying(x.Out).(*types.Struct)
	}
	for _, m := range decl.Members {
		mn := &tnode{kind: tnMember, text: m.Name.Name, attr: check.DefaultAttr}
		if m.Value != nil {
			k := d.expr(m.Value)
			mn.kids = []*tnode{k}
			mn.attr = k.attr
		}
		if out != nil {
			if f, _, ok := out.Field(m.Name.Name); ok {
				d.setType(mn, f.Type)
			}
		}
		n.args = append(n.args, mn)
	}
	return n
}

// clause builds a CLAUSE node. Its attributes once cooked are the least
// of its actions' and predicate's.
func (d *treeDumper) clause(cl *check.Clause) *tnode {
	n := &tnode{kind: tnClause, attr: check.DefaultAttr}
	for _, desc := range cl.Probes {
		// dtrace's parser expands macro arguments in descriptions.
		f := splitProbeDesc(desc)
		n.pdescs = append(n.pdescs, &tnode{kind: tnPdesc, text: f[0] + ":" + f[1] + ":" + f[2] + ":" + f[3]})
	}
	if cl.Pred != nil {
		n.pred = d.expr(cl.Pred)
	}
	if cl.Body != nil {
		n.args = d.stmts(cl.Body.List)
	}
	if d.cooked {
		a := check.DefaultAttr
		for _, s := range n.args {
			a = check.MinAttr(a, s.attr)
		}
		if n.pred != nil {
			a = check.MinAttr(a, n.pred.attr)
		}
		n.attr = a
	}
	return n
}

// splitProbeDesc splits a probe description into its four fields as
// dtrace's dtrace_str2desc() does: missing leading fields are empty.
func splitProbeDesc(desc string) [4]string {
	parts := strings.SplitN(desc, ":", 4)
	var f [4]string
	copy(f[4-len(parts):], parts)
	return f
}

// stmts builds the action list: one D EXPRESSION or D PRODUCER a
// statement (an action call), blocks flattened.
func (d *treeDumper) stmts(list []syntax.Stmt) []*tnode {
	var out []*tnode
	for _, s := range list {
		switch s := s.(type) {
		case *syntax.ExprStmt:
			x := d.expr(s.X)
			kind := tnDexpr
			if d.isAction(s.X) {
				kind = tnDfunc
			}
			out = append(out, &tnode{kind: kind, kids: []*tnode{x}, attr: x.attr})
		case *syntax.BlockStmt:
			out = append(out, d.stmts(s.List)...)
		case *syntax.IfStmt:
			n := &tnode{kind: tnIf, pred: d.expr(s.Cond)}
			n.attr = n.pred.attr
			n.args = d.stmts([]syntax.Stmt{s.Then})
			if s.Else != nil {
				n.elses = d.stmts([]syntax.Stmt{s.Else})
			}
			out = append(out, n)
		}
	}
	return out
}

// isAction reports whether e is a call of an action (dtrace's
// DT_IDENT_ACTFUNC), which makes its statement a D PRODUCER.
func (d *treeDumper) isAction(e syntax.Expr) bool {
	c, ok := unparen(e).(*syntax.CallExpr)
	if !ok {
		return false
	}
	if fn := d.info.Calls[c]; fn != nil {
		return fn.Kind == check.Action
	}
	if id, ok := c.Fun.(*syntax.Ident); ok {
		if fd := check.LookupFunc(id.Name); fd != nil {
			return fd.Kind == check.Action
		}
	}
	return false
}

// typeFlags returns the flags dtrace's dt_node_type_assign() caches for a
// node of type t (COOK included).
func typeFlags(t types.Type) int {
	f := nfCooked
	switch u := types.Underlying(t).(type) {
	case *types.Basic:
		switch u.K {
		case types.KindVoid:
			f |= nfSigned // D's void is a signed integer of no bits
		case types.KindInt:
			if u.Signed {
				f |= nfSigned
			}
			if size := u.Bytes; u.Bits != 0 && (u.Bits%8 != 0 || size > 8 || size&(size-1) != 0) {
				f |= nfBitfield
			}
		case types.KindFloat:
			if u.Bytes > 8 {
				f |= nfRef
			}
		}
	case *types.String, *types.Struct, *types.Array, *types.Func:
		f |= nfRef
	case *types.Special:
		switch u.K {
		case types.KindDyn, types.KindAgg:
			f |= nfSigned | nfRef // <DYN> is a typedef of void
		case types.KindOpaque:
			f |= nfRef // a forward declaration
		default:
			f |= nfSigned // stack, _symaddr, _usymaddr: typedefs of void
		}
	}
	return f
}

// typeName is the name dtrace prints for t.
func typeName(t types.Type) string {
	if s, ok := t.(*types.Special); ok && s.K == types.KindAgg {
		return types.Dyn.Name
	}
	return t.String()
}

func (d *treeDumper) setType(n *tnode, t types.Type) {
	if t == nil {
		return
	}
	n.typ = typeName(t)
	n.flags |= typeFlags(t)
}

// folded returns the value and type of e when dtrace has made it an
// integer constant (DT_NODE_INT): its parser folds literals, macro
// arguments, sizeof a type or string, offsetof, the unary + - ~ ! and the
// arithmetic, bitwise, shift, comparison and logical operators of such
// constants, and their casts to integer types (dt_node_op1/op2); cooking
// makes an enumerator one too (but folds nothing more). The value is the
// checker's.
func (d *treeDumper) folded(e syntax.Expr) (uint64, types.Type, bool) {
	return d.fold(e, d.cooked)
}

func (d *treeDumper) fold(e syntax.Expr, enums bool) (uint64, types.Type, bool) {
	e = unparen(e)
	tv := d.info.Types[e]
	if tv.Value == nil || tv.Value.IsStr || tv.Type == nil {
		return 0, nil, false
	}
	v, t := uint64(tv.Value.Int), tv.Type
	switch e := e.(type) {
	case *syntax.IntLit, *syntax.MacroVar, *syntax.OffsetofExpr:
		return v, t, true
	case *syntax.SizeofExpr:
		if _, str := unparen(e.X).(*syntax.StringLit); e.Type != nil || str {
			return v, t, true
		}
	case *syntax.Ident:
		if _, ok := d.info.Uses[e].(*check.EnumConst); ok && enums {
			return v, t, true
		}
	case *syntax.UnaryExpr:
		switch e.Op {
		case syntax.ADD, syntax.SUB, syntax.BNEG, syntax.NOT:
			// The operand's node is reused: its type stays.
			if _, ct, ok := d.fold(e.X, false); ok {
				return v, ct, true
			}
		}
	case *syntax.BinaryExpr:
		switch e.Op {
		case syntax.LOR, syntax.LXOR, syntax.LAND, syntax.OR, syntax.XOR, syntax.AND,
			syntax.EQL, syntax.NEQ, syntax.LSS, syntax.LEQ, syntax.GTR, syntax.GEQ,
			syntax.SHL, syntax.SHR, syntax.ADD, syntax.SUB, syntax.MUL, syntax.QUO, syntax.REM:
			_, _, lok := d.fold(e.X, false)
			_, _, rok := d.fold(e.Y, false)
			if lok && rok {
				return v, t, true
			}
		}
	case *syntax.CastExpr:
		if _, _, ok := d.fold(e.X, false); ok {
			if b, isInt := types.Underlying(t).(*types.Basic); isInt && b.K == types.KindInt {
				return v, t, true
			}
		}
	}
	return 0, nil, false
}

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

// writeTnode writes n and its subtree at depth as dt_node_printr().
func writeTnode(w io.Writer, n *tnode, depth int) {
	ind := strings.Repeat("  ", depth)
	a := attrString(n.attr)
	buf := "type=<-1>"
	if n.typ != "" {
		buf = "type=<" + n.typ + ">"
	}
	buf += " attr=" + a + " flags="
	if n.flags == 0 {
		buf += "0"
	} else {
		var fs []string
		for i, name := range nfNames {
			if n.flags&(1<<i) != 0 {
				fs = append(fs, name)
			}
		}
		buf += strings.Join(fs, ",")
	}
	list := func(l []*tnode) {
		for i, k := range l {
			writeTnode(w, k, depth+1)
			if i < len(l)-1 {
				fmt.Fprintf(w, "%s,\n", ind)
			}
		}
	}
	kid := func(i int) {
		if i < len(n.kids) && n.kids[i] != nil {
			writeTnode(w, n.kids[i], depth+1)
		}
	}
	fmt.Fprint(w, ind)
	switch n.kind {
	case tnInt:
		fmt.Fprintf(w, "INT 0x%x (%s)\n", n.value, buf)
	case tnString:
		fmt.Fprintf(w, "STRING \"%s\" (%s)\n", escapeD(n.text), buf)
	case tnIdent:
		fmt.Fprintf(w, "IDENT %s (%s)\n", n.text, buf)
	case tnVar:
		fmt.Fprintf(w, "VARIABLE %s%s (%s)\n", n.prefix, n.text, buf)
		if n.args != nil {
			fmt.Fprintf(w, "%s[\n", ind)
			list(n.args)
			fmt.Fprintf(w, "%s]\n", ind)
		}
	case tnSym:
		fmt.Fprintf(w, "SYMBOL %s (%s)\n", n.text, buf)
	case tnType:
		fmt.Fprintf(w, "TYPE (%s)\n", buf)
	case tnFunc:
		fmt.Fprintf(w, "FUNC %s (%s)\n", n.text, buf)
		list(n.args)
	case tnOp1:
		fmt.Fprintf(w, "OP1 %s (%s)\n", n.text, buf)
		kid(0)
	case tnOp2:
		fmt.Fprintf(w, "OP2 %s (%s)\n", n.text, buf)
		kid(0)
		kid(1)
	case tnOp3:
		fmt.Fprintf(w, "OP3 (%s)\n", buf)
		kid(0)
		fmt.Fprintf(w, "%s?\n", ind)
		kid(1)
		fmt.Fprintf(w, "%s:\n", ind)
		kid(2)
	case tnDexpr:
		fmt.Fprintf(w, "D EXPRESSION attr=%s\n", a)
		kid(0)
	case tnDfunc:
		fmt.Fprintf(w, "D PRODUCER attr=%s\n", a)
		kid(0)
	case tnAgg:
		fmt.Fprintf(w, "AGGREGATE @%s attr=%s [\n", n.text, a)
		list(n.args)
		fmt.Fprintf(w, "%s]\n", ind)
		if n.aggfun != nil {
			fmt.Fprintf(w, "%s=\n", ind)
			writeTnode(w, n.aggfun, depth+1)
		}
	case tnPdesc:
		fmt.Fprintf(w, "PDESC %s [0]\n", n.text)
	case tnClause:
		fmt.Fprintf(w, "CLAUSE attr=%s\n", a)
		for _, p := range n.pdescs {
			writeTnode(w, p, depth+1)
		}
		fmt.Fprintf(w, "%sCTXATTR %s\n", ind, attrString(n.ctxattr))
		if n.pred != nil {
			fmt.Fprintf(w, "%sPREDICATE /\n", ind)
			writeTnode(w, n.pred, depth+1)
			fmt.Fprintf(w, "%s/\n", ind)
		}
		fmt.Fprintf(w, "%sACTION\n", ind)
		for _, s := range n.args {
			writeTnode(w, s, depth+1)
		}
	case tnIf:
		// illumos' DT_NODE_IF (dtrace-utils has no if).
		fmt.Fprintf(w, "IF attr=%s CONDITION:\n", a)
		writeTnode(w, n.pred, depth+1)
		fmt.Fprintf(w, "%sIF BODY: \n", ind)
		for _, s := range n.args {
			writeTnode(w, s, depth+1)
		}
		if n.elses != nil {
			fmt.Fprintf(w, "%sIF ELSE: \n", ind)
			for _, s := range n.elses {
				writeTnode(w, s, depth+1)
			}
		}
	case tnInline:
		fmt.Fprintf(w, "INLINE %s (%s)\n", n.text, buf)
		kid(0)
	case tnMember:
		fmt.Fprintf(w, "MEMBER %s (%s)\n", n.text, buf)
		kid(0)
	case tnXlator:
		fmt.Fprintf(w, "XLATOR (%s)%s\n", buf, n.text)
		for _, m := range n.args {
			writeTnode(w, m, depth+1)
		}
	case tnProbe:
		fmt.Fprintf(w, "PROBE %s\n", n.text)
	case tnProvider:
		fmt.Fprintf(w, "PROVIDER %s (decl)\n", n.text)
		for _, p := range n.args {
			writeTnode(w, p, depth+1)
		}
	case tnProg:
		fmt.Fprintf(w, "PROGRAM attr=%s\n", a)
		for _, c := range n.args {
			writeTnode(w, c, depth+1)
		}
	}
}

// attrString writes attributes as dtrace's dt_attr_str(): the initial
// of each stability and of the class.
func attrString(a check.Attr) string {
	const stability = "ipoxuesS"
	const class = "uCpgIc"
	if int(a.Name) < len(stability) && int(a.Data) < len(stability) && int(a.Class) < len(class) {
		return fmt.Sprintf("[%c/%c/%c]", stability[a.Name], stability[a.Data], class[a.Class])
	}
	return fmt.Sprintf("[%d/%d/%d]", a.Name, a.Data, a.Class)
}

// dEscapes are the characters strchr2esc() writes as a C escape.
var dEscapes = [256]string{'\a': `\a`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`, '\v': `\v`,
	'\\': `\\`, '"': `\"`}

// escapeD writes s with C escapes as dtrace's strchr2esc().
func escapeD(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case dEscapes[c] != "":
			b.WriteString(dEscapes[c])
		case c < ' ' || c >= 0x7f:
			b.WriteString(`\` + strconv.FormatInt(int64(c), 8))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// errorProgram is dtrace's default ERROR clause (_dt_errprog in
// dt_handle.c), which dtrace_handle_err() compiles after the user's
// programs when dtrace is to enable them.
const errorProgram = "dtrace:::ERROR{\ttrace(arg1);\ttrace(arg2);\ttrace(arg3);\ttrace(arg4);\ttrace(arg5);}"

// DumpErrorProgramTrees prints, when the tree option asks for parse
// trees, those of dtrace's default ERROR clause, as dtrace prints them
// after the user's programs' when it establishes its error handler
// (dtrace(1) does in every mode that enables programs, -e included).
// We report probe errors from the fault records without such a
// clause: it is parsed and checked for the dump only, and is not
// enabled. Without the tree option it does nothing.
func (h *Handle) DumpErrorProgramTrees() error {
	if h.opts.Tree <= 0 {
		return nil
	}
	src := Source{Name: "dtrace error program", Text: errorProgram, Kind: SpecProgram}
	ast, err := h.parse(src)
	if err != nil {
		return err
	}
	// The user's programs are not checked again (their pragmas would
	// apply twice): the clause names builtins only.
	progs := append(append([]*syntax.Program(nil), h.lib.Programs...), ast)
	conf := h.checkConfig()
	info, err := check.Check(h.fset, progs, conf)
	if err != nil {
		return err
	}
	dumpTrees(h.conf.Stderr, h.opts.Tree, ast, info, conf)
	return nil
}
