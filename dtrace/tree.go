package dtrace

import (
	"fmt"
	"io"
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
