package check

import (
	"errors"
	"strconv"
	"strings"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// Expression flags beyond TypeAndValue, kept while checking.
type exprFlags struct {
	writable bool // a D variable or derived from one: may be assigned
	bitfield bool
	isVar    bool // a D variable or aggregation node (for & and [])
	action   bool // a call of a void action
	aggCall  bool // a call of an aggregating function outside @x = f()
	inAlloca bool // an lvalue in alloca()ed memory (so &x is an alloca pointer)
	mixed    bool // a ?: with alloca and non-alloca pointer branches
}

// opstr returns the operator as dtrace prints it in messages.
func opstr(op syntax.Token) string {
	switch op {
	case syntax.SIZEOF:
		return "sizeof"
	case syntax.STRINGOF:
		return "stringof"
	}
	if s, ok := syntax.OpText(op); ok {
		return s
	}
	return "?"
}

// bad is the result of an expression with an error.
var bad = TypeAndValue{}

// record stores tv for e and returns it.
func (c *checker) record(e syntax.Expr, tv TypeAndValue, fl exprFlags) TypeAndValue {
	if v, ok := c.info.Uses[e].(*Var); ok && v.Alloca {
		tv.Alloca = true
	}
	c.info.Types[e] = tv
	c.flags[e] = fl
	return tv
}

// fail reports an error and returns bad; checking of the enclosing
// expression stops there, as dtrace stops at its first error.
func (c *checker) fail(pos syntax.Pos, tag Tag, format string, args ...any) TypeAndValue {
	c.errorf(pos, tag, format, args...)
	return bad
}

func intConst(v int64) *Const { return &Const{Int: v} }

// castConst converts a constant of type from to type to as dtrace's
// parser does: only a narrowing cast or a change of signedness at the same
// size truncates or extends the 64-bit value.
func castConst(v int64, from, to types.Type) int64 {
	src, dst := from.Size(), to.Size()
	if dst <= 0 || dst >= 8 {
		return v
	}
	srcSigned, dstSigned := types.IsSigned(from), types.IsSigned(to)
	switch {
	case dst > src && (dstSigned || !srcSigned):
		return v
	case dst == src && dstSigned == srcSigned:
		return v
	}
	return normalize(v, to)
}

// normalize truncates v to the size of t and sign-extends it if t is signed.
func normalize(v int64, t types.Type) int64 {
	n := t.Size()
	if n <= 0 || n >= 8 {
		return v
	}
	bits := uint(n * 8)
	if types.IsSigned(t) {
		return v << (64 - bits) >> (64 - bits)
	}
	return int64(uint64(v) & (1<<bits - 1))
}

// expr checks e as an rvalue.
func (c *checker) expr(e syntax.Expr) TypeAndValue {
	return c.exprx(e, false)
}

// exprx checks e; lhs is set when e is the target of an assignment, where
// an undefined variable is created rather than reported.
func (c *checker) exprx(e syntax.Expr, lhs bool) TypeAndValue {
	switch e := e.(type) {
	case nil:
		return bad
	case *syntax.BadExpr:
		return bad
	case *syntax.ParenExpr:
		tv := c.exprx(e.X, lhs)
		if tv.Type == nil {
			return bad
		}
		return c.record(e, tv, c.flags[e.X])
	case *syntax.IntLit:
		return c.intLit(e)
	case *syntax.FloatLit:
		return c.record(e, TypeAndValue{Type: types.Double}, exprFlags{})
	case *syntax.StringLit:
		return c.record(e, TypeAndValue{Type: c.strType, Value: &Const{Str: e.Value, IsStr: true}}, exprFlags{})
	case *syntax.Ident:
		return c.ident(e, lhs)
	case *syntax.ScopedVar:
		return c.scopedVar(e, lhs)
	case *syntax.MacroVar:
		return c.macroVar(e)
	case *syntax.AggExpr:
		return c.aggRef(e)
	case *syntax.UnaryExpr:
		return c.unary(e)
	case *syntax.PostfixExpr:
		return c.incdec(e, e.Op, e.X)
	case *syntax.BinaryExpr:
		return c.binary(e)
	case *syntax.AssignExpr:
		return c.assign(e)
	case *syntax.CondExpr:
		return c.cond(e)
	case *syntax.CastExpr:
		return c.cast(e)
	case *syntax.SizeofExpr:
		return c.sizeof(e)
	case *syntax.StringofExpr:
		x := c.expr(e.X)
		if x.Type == nil {
			return bad
		}
		if !isScalar(x.Type) && !types.IsStringLike(x.Type) {
			return c.fail(c.last(e), D_STRINGOF_TYPE, "cannot apply stringof to a value of type %s", types.TypeString(x.Type))
		}
		return c.record(e, TypeAndValue{Type: c.strType, Value: strValue(x)}, exprFlags{})
	case *syntax.OffsetofExpr:
		return c.offsetof(e)
	case *syntax.XlateExpr:
		return c.xlate(e)
	case *syntax.CallExpr:
		return c.call(e, false)
	case *syntax.IndexExpr:
		return c.index(e, lhs)
	case *syntax.MemberExpr:
		return c.member(e)
	}
	return c.fail(c.after(e), D_UNKNOWN, "internal error -- unexpected expression %T", e)
}

// strValue keeps a constant string through stringof.
func strValue(x TypeAndValue) *Const {
	if x.Value != nil && x.Value.IsStr {
		return x.Value
	}
	return nil
}

// intLit gives an integer constant the first type of int, unsigned int,
// long, unsigned long, long long, unsigned long long that holds it and
// that its suffix permits.
func (c *checker) intLit(e *syntax.IntLit) TypeAndValue {
	if e.Overflow {
		return c.fail(e.Pos(), D_INT_OFLOW, "integer constant 0x%s cannot be represented in any built-in integral type", "ffffffffffffffff")
	}
	// dtrace's rule: the suffix picks the first candidate (u: +1, each
	// l: +2) in int, unsigned int, long, unsigned long, long long,
	// unsigned long long; decimal constants and u suffixes skip every
	// other one, keeping the signedness.
	ints := []struct {
		t   *types.Basic
		max uint64
	}{
		{types.Int, 0x7fffffff},
		{types.UnsignedInt, 0xffffffff},
		{types.Long, 0x7fffffffffffffff},
		{types.UnsignedLong, 0xffffffffffffffff},
		{types.LongLong, 0x7fffffffffffffff},
		{types.UnsignedLongLong, 0xffffffffffffffff},
	}
	i := 0
	for _, r := range e.Suffix {
		switch r {
		case 'u':
			i++
		case 'l':
			i += 2
		}
	}
	decimal := !strings.HasPrefix(e.Text, "0") || e.Text == "0"
	step := 1
	if decimal || strings.HasPrefix(e.Suffix, "u") {
		step = 2
	}
	for ; i < len(ints); i += step {
		if e.Value <= ints[i].max {
			return c.record(e, TypeAndValue{Type: ints[i].t, Value: intConst(int64(e.Value))}, exprFlags{})
		}
	}
	return c.fail(e.Pos(), D_INT_OFLOW, "integer constant 0x%x cannot be represented in any built-in integral type", e.Value)
}

// ident resolves a plain identifier.
func (c *checker) ident(e *syntax.Ident, lhs bool) TypeAndValue {
	if e.Scoped {
		return c.symbol(e)
	}
	name := e.Name
	if p, ok := c.params[name]; ok {
		c.info.Uses[e] = p
		return c.record(e, TypeAndValue{Type: p.Type}, exprFlags{})
	}
	if v, ok := c.globals[name]; ok {
		if v.Type == nil && !lhs {
			return c.fail(e.Pos(), D_VAR_UNDEF, "%s has not yet been declared or assigned", name)
		}
		if v.Type == nil {
			c.fresh = v
		}
		if v.Keys != nil {
			return c.fail(e.Pos(), D_IDENT_BADREF, "associative array '%s' may not be referenced as scalar", name)
		}
		c.use(e, v)
		return c.record(e, TypeAndValue{Type: v.Type, Lvalue: true}, exprFlags{writable: true, isVar: true})
	}
	if b, ok := c.builtins[name]; ok {
		if s, late := c.lateTypes[b]; late {
			if t := c.protoType(s); !isOpaque(t) {
				b.Type = t
				delete(c.lateTypes, b)
			}
		}
		if b.Array {
			return c.fail(e.Pos(), D_IDENT_BADREF, "associative array '%s' may not be referenced as scalar", name)
		}
		if lhs {
			c.info.Uses[e] = b
			return c.record(e, TypeAndValue{Type: b.Type, Lvalue: true}, exprFlags{isVar: true})
		}
		c.info.Uses[e] = b
		return c.record(e, TypeAndValue{Type: b.Type}, exprFlags{isVar: true})
	}
	if in, ok := c.inlines[name]; ok {
		c.info.Uses[e] = in
		tv := TypeAndValue{Type: in.Type}
		if v, ok := c.info.Types[in.Value]; ok && v.Value != nil {
			tv.Value = v.Value
		}
		return c.record(e, tv, exprFlags{})
	}
	if ec, ok := c.enumConsts[name]; ok {
		c.info.Uses[e] = ec
		return c.record(e, TypeAndValue{Type: ec.Enum, Value: intConst(ec.Value)}, exprFlags{})
	}
	if fi, ok := c.funcs[name]; ok {
		return c.fail(e.Pos(), D_IDENT_BADREF, "%s '%s' may not be referenced as scalar", funcKindName(fi.fn.Kind), name)
	}
	if t, ok := c.externs[name]; ok {
		sym := &Symbol{Module: e.Module, Name: name, Type: t}
		if ks, ok := c.kernelSymbol("", name); ok {
			sym.Module, sym.Addr, sym.Local = ks.Module, ks.Addr, ks.Local
		}
		c.info.Uses[e] = sym
		return c.record(e, TypeAndValue{Type: t, Lvalue: true}, exprFlags{})
	}
	// A name being assigned creates a D variable: dtrace-utils looks up
	// kernel symbols only when they are read (or written with a
	// backquote), which also spares scripts the kallsyms scan.
	if sym, ok := c.kernelSymbolRead(name, lhs); ok {
		return c.symbolUse(e, sym)
	}
	if lhs {
		if c.clause == nil {
			return c.fail(e.Pos(), D_IDENT_UNDEF, "failed to resolve %s: Unknown variable name", name)
		}
		v := c.newVar(name, GlobalVar, nil, nil, e.Pos())
		c.globals[name] = v
		c.fresh = v
		c.use(e, v)
		return c.record(e, TypeAndValue{Lvalue: true}, exprFlags{writable: true, isVar: true})
	}
	return c.fail(e.Pos(), D_IDENT_UNDEF, "failed to resolve %s: Unknown variable name", name)
}

// kernelSymbolRead looks up an unscoped kernel variable unless the name
// is being assigned. A bare identifier names only a global symbol: the
// kernel's static variables (6.12 has one named x) would otherwise
// capture the undefined names of D programs.
func (c *checker) kernelSymbolRead(name string, lhs bool) (*Symbol, bool) {
	if lhs {
		return nil, false
	}
	sym, ok := c.kernelSymbol("", name)
	if !ok || sym.Local {
		return nil, false
	}
	return sym, true
}

// kernelSymbol looks up a kernel variable.
func (c *checker) kernelSymbol(module, name string) (*Symbol, bool) {
	if c.conf.Kernel == nil {
		return nil, false
	}
	return c.conf.Kernel.LookupSymbol(module, name)
}

// symbol resolves a backquoted kernel symbol, local ones included (as
// dtrace does: the module and backquote say which symbol is meant).
func (c *checker) symbol(e *syntax.Ident) TypeAndValue {
	if sym, ok := c.kernelSymbol(e.Module, e.Name); ok {
		return c.symbolUse(e, sym)
	}
	return c.fail(e.Pos(), D_IDENT_UNDEF, "failed to resolve %s`%s: Unknown symbol name", e.Module, e.Name)
}

// symbolUse records e as a use of the kernel symbol sym. A symbol the
// kernel's BTF does not type takes the type of an extern declaration of
// its name (the program's or the D library's); without one its value
// cannot be read, for its size is unknown (DTrace's D_SYM_NOTYPES), but
// its address may be taken (&`sym is a uintptr_t *, as dtrace types a
// symbol without type data).
func (c *checker) symbolUse(e *syntax.Ident, sym *Symbol) TypeAndValue {
	if sym.Type == nil {
		s := *sym
		if t, ok := c.symTypes[sym.Name]; ok {
			s.Type = t
		} else if c.addrOperand == syntax.Expr(e) {
			s.Type = types.Uintptr
		} else {
			return c.fail(e.Pos(), D_SYM_NOTYPES, "no symbolic type information is available for %s`%s: No type information available for symbol", sym.Module, sym.Name)
		}
		sym = &s
	}
	c.info.Uses[e] = sym
	return c.record(e, TypeAndValue{Type: sym.Type, Lvalue: true}, exprFlags{})
}

// newVar creates a variable.
func (c *checker) newVar(name string, kind VarKind, t types.Type, keys []types.Type, pos syntax.Pos) *Var {
	v := &Var{Name: name, Kind: kind, ID: c.nvars[kind], Type: t, Keys: keys, Pos: pos}
	c.nvars[kind]++
	if t != nil {
		v.Size = t.Size()
	}
	c.info.Vars = append(c.info.Vars, v)
	return v
}

// use records a reference to a variable from the current clause.
func (c *checker) use(e syntax.Expr, v *Var) {
	c.info.Uses[e] = v
	if c.clause == nil {
		return
	}
	list := &c.clause.Vars
	if v.Kind == LocalVar {
		list = &c.clause.Locals
	}
	for _, w := range *list {
		if w == v {
			return
		}
	}
	*list = append(*list, v)
}

// scopeTable returns the variables of a scope, their kind and the prefix
// messages name them with.
func (c *checker) scopeTable(s syntax.VarScope) (map[string]*Var, VarKind, string) {
	switch s {
	case syntax.ScopeThis:
		return c.locals, LocalVar, "this->"
	case syntax.ScopeFlow:
		return c.flows, FlowVar, "flow->"
	}
	return c.threads, ThreadVar, "self->"
}

// scopedVar resolves self->x, this->x and flow->x.
func (c *checker) scopedVar(e *syntax.ScopedVar, lhs bool) TypeAndValue {
	tab, kind, prefix := c.scopeTable(e.Scope)
	name := e.Name.Name
	v, ok := tab[name]
	if ok && v.Keys != nil {
		return c.fail(c.last(e), D_IDENT_BADREF, "associative array '%s%s' may not be referenced as scalar", prefix, name)
	}
	if !ok {
		if !lhs {
			return c.fail(c.last(e), D_VAR_UNDEF, "%s%s has not yet been declared or assigned", prefix, name)
		}
		v = c.newVar(name, kind, nil, nil, e.Pos())
		tab[name] = v
		c.fresh = v
	} else if v.Type == nil && lhs {
		c.fresh = v
	} else if v.Type == nil {
		return c.fail(c.last(e), D_VAR_UNDEF, "%s%s has not yet been declared or assigned", prefix, name)
	}
	c.use(e, v)
	return c.record(e, TypeAndValue{Type: v.Type, Lvalue: true}, exprFlags{writable: true, isVar: true})
}

// macroVar expands $N, $$N and $name.
func (c *checker) macroVar(e *syntax.MacroVar) TypeAndValue {
	c.info.Uses[e] = &Macro{Name: e.Name, Quoted: e.Quoted}
	if n, err := strconv.Atoi(e.Name); err == nil {
		if n >= 0 && n < len(c.conf.MacroArgs) {
			if n < len(c.usedArgs) {
				c.usedArgs[n] = true
			}
			s := c.conf.MacroArgs[n]
			if e.Quoted || n == 0 {
				return c.record(e, TypeAndValue{Type: c.strType, Value: &Const{Str: s, IsStr: true}}, exprFlags{})
			}
			return c.macroValue(e, s)
		}
		if c.defaultArgs {
			if e.Quoted {
				return c.record(e, TypeAndValue{Type: c.strType, Value: &Const{IsStr: true}}, exprFlags{})
			}
			return c.record(e, TypeAndValue{Type: types.Int, Value: intConst(0)}, exprFlags{})
		}
		return c.fail(e.Pos(), D_MACRO_UNDEF, "macro argument %s%s is not defined", macroPrefix(e), e.Name)
	}
	v, ok := c.conf.Macros[e.Name]
	if !ok {
		if e.Name == "target" {
			v, ok = 0, true
		} else if !knownMacro(e.Name) {
			return c.fail(e.Pos(), D_MACRO_UNDEF, "macro variable %s%s is not defined", macroPrefix(e), e.Name)
		}
	}
	if e.Quoted {
		return c.record(e, TypeAndValue{Type: c.strType, Value: &Const{Str: strconv.FormatInt(v, 10), IsStr: true}}, exprFlags{})
	}
	return c.record(e, TypeAndValue{Type: types.Int, Value: intConst(v)}, exprFlags{})
}

func macroPrefix(e *syntax.MacroVar) string {
	if e.Quoted {
		return "$$"
	}
	return "$"
}

func knownMacro(name string) bool {
	switch name {
	case "egid", "euid", "gid", "pid", "pgid", "ppid", "projid", "sid", "target", "taskid", "uid":
		return true
	}
	return false
}

// macroValue interprets an unquoted macro argument: an integer, or an
// identifier-like string which dtrace accepts as a string in some places.
func (c *checker) macroValue(e *syntax.MacroVar, s string) TypeAndValue {
	if v, err := strconv.ParseInt(s, 0, 64); err == nil {
		t := types.Type(types.Int)
		if v > 0x7fffffff || v < -0x80000000 {
			t = types.Long
		}
		return c.record(e, TypeAndValue{Type: t, Value: intConst(v)}, exprFlags{})
	}
	if v, err := strconv.ParseUint(s, 0, 64); err == nil {
		return c.record(e, TypeAndValue{Type: types.UnsignedLong, Value: intConst(int64(v))}, exprFlags{})
	} else if errors.Is(err, strconv.ErrRange) {
		// A number, but too big for 64 bits: dtrace refuses it rather
		// than reading it as a string.
		return c.fail(e.Pos(), D_MACRO_OFLOW, "macro argument %s%s constant %s results in integer overflow", macroPrefix(e), e.Name, s)
	}
	return c.record(e, TypeAndValue{Type: c.strType, Value: &Const{Str: s, IsStr: true}}, exprFlags{})
}

// sizeof computes sizeof(type) and sizeof expr.
func (c *checker) sizeof(e *syntax.SizeofExpr) TypeAndValue {
	var t types.Type
	if e.Type != nil {
		t = c.typeName(e.Type)
		if t == nil {
			return bad
		}
	} else {
		if id, ok := syntax.Unparen(e.X).(*syntax.Ident); ok && !id.Scoped {
			if v, ok := c.globals[id.Name]; ok && v.Keys != nil {
				return c.fail(c.after(e.X), D_IDENT_BADREF, "associative array '%s' may not be referenced as scalar", id.Name)
			}
		}
		x := c.expr(e.X)
		if x.Type == nil {
			return bad
		}
		if c.flags[e.X].bitfield {
			return c.fail(c.last(e), D_SIZEOF_BITFIELD, "cannot apply sizeof to a bit-field")
		}
		t = x.Type
		if x.Value != nil && x.Value.IsStr {
			// A string constant's size is its length plus the NUL.
			return c.record(e, TypeAndValue{Type: types.SizeT, Value: intConst(int64(len(x.Value.Str) + 1))}, exprFlags{})
		}
	}
	if t.Size() == 0 {
		return c.fail(c.last(e), D_SIZEOF_TYPE, "cannot apply sizeof to an operand of unknown size")
	}
	return c.record(e, TypeAndValue{Type: types.SizeT, Value: intConst(t.Size())}, exprFlags{})
}

// offsetof computes offsetof(type, member).
func (c *checker) offsetof(e *syntax.OffsetofExpr) TypeAndValue {
	t := c.typeName(e.Type)
	if t == nil {
		return bad
	}
	s, ok := types.Underlying(t).(*types.Struct)
	if !ok || !s.Complete {
		return c.fail(c.last(e), D_OFFSETOF_TYPE, "offsetof operand must be a struct or union type")
	}
	var off int64
	for i, m := range e.Member {
		f, o, ok := s.Field(m.Name)
		if !ok {
			return c.fail(c.after(m), D_UNKNOWN, "failed to determine offset of %s: Member name not found", m.Name)
		}
		if f.Bits > 0 {
			return c.fail(c.after(m), D_OFFSETOF_BITFIELD, "cannot take offset of a bit-field: %s", m.Name)
		}
		off += o
		if i < len(e.Member)-1 {
			s, ok = types.Underlying(f.Type).(*types.Struct)
			if !ok {
				return c.fail(c.after(m), D_OFFSETOF_TYPE, "offsetof operand must be a struct or union type")
			}
		}
	}
	return c.record(e, TypeAndValue{Type: types.SizeT, Value: intConst(off / 8)}, exprFlags{})
}

// typeAndOperand checks the type name tn and then the expression x of a
// cast or an xlate; false if either is bad (and reported).
func (c *checker) typeAndOperand(tn *syntax.TypeName, e syntax.Expr) (types.Type, TypeAndValue, bool) {
	t := c.typeName(tn)
	if t == nil {
		return nil, bad, false
	}
	x := c.expr(e)
	return t, x, x.Type != nil
}

// cast checks (type) x.
func (c *checker) cast(e *syntax.CastExpr) TypeAndValue {
	t, x, ok := c.typeAndOperand(e.Type, e.X)
	if !ok {
		return bad
	}
	if xl, ok := syntax.Unparen(e.X).(*syntax.XlateExpr); ok && types.IsPointer(c.info.Types[xl].Type) {
		return c.fail(c.after(e), D_CAST_INVAL, "invalid cast expression: \"pointer to translated data\" to \"%s\"", types.TypeString(t))
	}
	switch {
	case types.IsVoid(t):
	case isScalar(t) && (isScalar(x.Type) || types.IsStringLike(x.Type) || types.IsArray(x.Type)):
	case types.IsString(t) && (isScalar(x.Type) || types.IsStringLike(x.Type)):
	case types.Identical(t, x.Type):
	default:
		return c.fail(c.after(e), D_CAST_INVAL, "invalid cast expression: \"%s\" to \"%s\"", types.TypeString(x.Type), types.TypeString(t))
	}
	tv := TypeAndValue{Type: t, Alloca: x.Alloca}
	if x.Value != nil && !x.Value.IsStr && isInt(t) {
		tv.Value = intConst(castConst(x.Value.Int, x.Type, t))
	} else if x.Value != nil && x.Value.IsStr && types.IsString(t) {
		tv.Value = x.Value
	}
	// As in illumos, a cast to a pointer may be stored through: whether
	// the memory is writable is checked when the store runs.
	return c.record(e, tv, exprFlags{writable: types.IsPointer(t)})
}

// unary checks prefix operators.
func (c *checker) unary(e *syntax.UnaryExpr) TypeAndValue {
	switch e.Op {
	case syntax.INC, syntax.DEC:
		return c.incdec(e, e.Op, e.X)
	}
	if e.Op == syntax.AND {
		c.addrOperand = syntax.Unparen(e.X)
	}
	x := c.expr(e.X)
	c.addrOperand = nil
	if x.Type == nil {
		return bad
	}
	fl := c.flags[e.X]
	switch e.Op {
	case syntax.MUL:
		t := types.Elem(x.Type)
		if t == nil { // neither a pointer nor an array
			return c.fail(c.after(e), D_DEREF_NONPTR, "cannot dereference non-pointer type")
		}
		if types.IsVoid(t) {
			return c.fail(c.after(e), D_DEREF_VOID, "cannot dereference pointer to void")
		}
		if types.Underlying(t).Kind() == types.KindFunc {
			return c.fail(c.after(e), D_DEREF_FUNC, "cannot dereference pointer to function")
		}
		// As in dtrace, *(a + i) is writable when a is, the form a[i]
		// takes.
		w := fl.writable
		if b, ok := syntax.Unparen(e.X).(*syntax.BinaryExpr); ok && b.Op == syntax.ADD && c.flags[b.X].writable {
			w = true
		}
		return c.record(e, TypeAndValue{Type: t, Lvalue: !types.IsArray(t)}, exprFlags{writable: w, inAlloca: x.Alloca})
	case syntax.ADD, syntax.SUB:
		if !isInt(x.Type) {
			return c.fail(c.after(e), D_OP_ARITH, "operator %s requires an operand of arithmetic type", opstr(e.Op))
		}
		tv := TypeAndValue{Type: x.Type}
		if x.Value != nil {
			v := x.Value.Int
			if e.Op == syntax.SUB {
				v = -v
			}
			if e.Op == syntax.SUB && !types.IsSigned(x.Type) {
				// dtrace truncates a negated unsigned constant to its size.
				v = normalize(v, x.Type)
			}
			tv.Value = intConst(v)
		}
		return c.record(e, tv, exprFlags{})
	case syntax.BNEG:
		if !isInt(x.Type) {
			return c.fail(c.after(e), D_OP_INT, "operator %s requires an operand of integral type", opstr(e.Op))
		}
		tv := TypeAndValue{Type: x.Type}
		if x.Value != nil {
			tv.Value = intConst(^x.Value.Int)
		}
		return c.record(e, tv, exprFlags{})
	case syntax.NOT:
		if !isScalar(x.Type) {
			return c.fail(c.after(e), D_OP_SCALAR, "operator %s requires an operand of scalar type", opstr(e.Op))
		}
		tv := TypeAndValue{Type: types.Int}
		if x.Value != nil && !x.Value.IsStr {
			tv.Value = intConst(b2i(x.Value.Int == 0))
		}
		return c.record(e, tv, exprFlags{})
	case syntax.AND:
		if fl.isVar {
			return c.fail(c.after(e), D_ADDROF_VAR, "cannot take address of dynamic variable")
		}
		if types.Underlying(x.Type).Kind() == types.KindDyn || c.dynamicName(e.X) != "" {
			return c.fail(c.after(e), D_ADDROF_VAR, "cannot take address of dynamic object")
		}
		if !x.Lvalue {
			return c.fail(c.after(e), D_ADDROF_LVAL, "unacceptable operand for unary & operator")
		}
		if fl.bitfield {
			return c.fail(c.after(e), D_ADDROF_BITFIELD, "cannot take address of bit-field")
		}
		return c.record(e, TypeAndValue{Type: types.NewPointer(x.Type), Alloca: fl.inAlloca}, exprFlags{})
	case syntax.SIZEOF:
		return c.sizeof(&syntax.SizeofExpr{Span: e.Span, X: e.X})
	case syntax.STRINGOF:
		return c.exprx(&syntax.StringofExpr{Span: e.Span, X: e.X}, false)
	}
	return c.fail(c.after(e), D_UNKNOWN, "invalid unary op %s", opstr(e.Op))
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// incdec checks ++ and -- in both positions.
func (c *checker) incdec(e syntax.Expr, op syntax.Token, xe syntax.Expr) TypeAndValue {
	pos := c.after(e)
	if _, ok := e.(*syntax.PostfixExpr); ok {
		pos = c.last(e)
	}
	// ++ and -- may create a scalar variable, of type int64_t.
	c.fresh = nil
	x := c.exprx(xe, true)
	if v := c.fresh; v != nil {
		c.fresh = nil
		v.Type, v.Size = types.Int64, 8
		x = c.record(xe, TypeAndValue{Type: v.Type, Lvalue: true}, c.flags[xe])
	}
	c.fresh = nil
	if x.Type == nil {
		return bad
	}
	fl := c.flags[xe]
	if !isScalar(x.Type) {
		return c.fail(pos, D_OP_SCALAR, "operator %s requires operand of scalar type", opstr(op))
	}
	if p, ok := types.Underlying(x.Type).(*types.Pointer); ok && (types.IsVoid(p.Elem) || p.Elem.Size() == 0) {
		return c.fail(pos, D_OP_VFPTR, "operator %s requires an operand of known size", opstr(op))
	}
	if !x.Lvalue {
		return c.fail(pos, D_OP_LVAL, "operator %s requires modifiable lvalue as an operand", opstr(op))
	}
	if !fl.writable {
		return c.fail(pos, D_OP_WRITE, "operator %s can only be applied to a writable variable", opstr(op))
	}
	return c.record(e, TypeAndValue{Type: x.Type}, exprFlags{})
}

// binary checks binary operators, folding constants.
func (c *checker) binary(e *syntax.BinaryExpr) TypeAndValue {
	op := e.Op
	x := c.expr(e.X)
	if x.Type == nil {
		return bad
	}
	// Comparing an enum to one of its enumerators by name.
	var y TypeAndValue
	if id, ok := e.Y.(*syntax.Ident); ok && isCompare(op) && !id.Scoped {
		if en, ok := types.Underlying(x.Type).(*types.Enum); ok {
			if v, ok := en.Lookup(id.Name); ok {
				y = c.record(e.Y, TypeAndValue{Type: x.Type, Value: intConst(v)}, exprFlags{})
			}
		}
	}
	if y.Type == nil {
		y = c.expr(e.Y)
	}
	if y.Type == nil {
		return bad
	}
	if op != syntax.COMMA && (c.flags[e.X].action || c.flags[e.Y].action) {
		return c.fail(c.after(e), D_OP_ACT, "operator %s operands cannot be actions", opstr(op))
	}
	incompat := func() TypeAndValue {
		return c.fail(c.after(e), D_OP_INCOMPAT, "operands have incompatible types: \"%s\" %s \"%s\"",
			types.TypeString(x.Type), opstr(op), types.TypeString(y.Type))
	}
	var t types.Type
	switch op {
	case syntax.AND, syntax.OR, syntax.XOR, syntax.SHL, syntax.SHR, syntax.REM:
		if !isInt(x.Type) || !isInt(y.Type) {
			return c.fail(c.after(e), D_OP_INT, "operator %s requires operands of integral type", opstr(op))
		}
		if op == syntax.SHL || op == syntax.SHR {
			t = x.Type
		} else {
			t = types.ArithResult(x.Type, y.Type)
		}
	case syntax.MUL, syntax.QUO:
		if !isInt(x.Type) || !isInt(y.Type) {
			return c.fail(c.after(e), D_OP_ARITH, "operator %s requires operands of arithmetic type", opstr(op))
		}
		t = types.ArithResult(x.Type, y.Type)
	case syntax.LAND, syntax.LOR, syntax.LXOR:
		if !isScalar(x.Type) || !isScalar(y.Type) {
			return c.fail(c.after(e), D_OP_SCALAR, "operator %s requires operands of scalar type", opstr(op))
		}
		t = types.Int
	case syntax.LSS, syntax.GTR, syntax.LEQ, syntax.GEQ, syntax.EQL, syntax.NEQ:
		switch {
		case types.Identical(x.Type, y.Type) && types.Underlying(x.Type).Kind() != types.KindDyn:
		case isInt(x.Type) && isInt(y.Type):
		case isStrCompat(x.Type) && isStrCompat(y.Type) && (types.IsString(x.Type) || types.IsString(y.Type)):
		case c.ptrCompat(e.X, x, e.Y, y):
		default:
			return incompat()
		}
		t = types.Int
	case syntax.ADD, syntax.SUB:
		xp := types.IsString(x.Type) || (isPtrLike(x.Type) && !isVoidFuncPtr(x.Type))
		yp := types.IsString(y.Type) || (isPtrLike(y.Type) && !isVoidFuncPtr(y.Type))
		xi, yi := isInt(x.Type), isInt(y.Type)
		switch {
		case xi && yi:
			t = types.ArithResult(x.Type, y.Type)
		case xp && yi:
			t = x.Type
			if a, ok := types.Underlying(x.Type).(*types.Array); ok {
				if y.Value != nil && a.Len > 1 && uint64(y.Value.Int) >= uint64(a.Len) && !c.flags[e.X].isVar {
					return c.fail(c.after(e), D_ARR_BOUNDS, "index outside array bounds: %d, max is %d", uint64(y.Value.Int), a.Len)
				}
				t = types.NewPointer(a.Elem)
			}
		case xi && yp && op == syntax.ADD:
			t = y.Type
			if a, ok := types.Underlying(y.Type).(*types.Array); ok {
				t = types.NewPointer(a.Elem)
			}
		case xp && yp && op == syntax.SUB && c.ptrCompat(e.X, x, e.Y, y):
			t = types.Ptrdiff
		default:
			return incompat()
		}
	case syntax.COMMA:
		return c.record(e, TypeAndValue{Type: y.Type, Value: y.Value}, c.flags[e.Y])
	default:
		return c.fail(c.after(e), D_UNKNOWN, "invalid binary op %s", opstr(op))
	}
	tv := TypeAndValue{Type: t}
	if (op == syntax.ADD || op == syntax.SUB) && isPtrLike(t) {
		tv.Alloca = x.Alloca || y.Alloca
	}
	if x.Value != nil && y.Value != nil {
		v, ok, err := foldBinary(op, x, y, t)
		if err != "" {
			return c.fail(c.after(e), D_DIV_ZERO, "%s", err)
		}
		if ok {
			tv.Value = v
		}
	}
	return c.record(e, tv, exprFlags{})
}

func isCompare(op syntax.Token) bool {
	switch op {
	case syntax.LSS, syntax.GTR, syntax.LEQ, syntax.GEQ, syntax.EQL, syntax.NEQ:
		return true
	}
	return false
}

// isOpaque reports a kernel type known only by name (no kernel type
// information): the checker accepts what it cannot verify.
func isOpaque(t types.Type) bool {
	if t == nil {
		return false
	}
	if types.Underlying(t).Kind() == types.KindOpaque {
		return true
	}
	if p, ok := types.Underlying(t).(*types.Pointer); ok {
		return types.Underlying(p.Elem).Kind() == types.KindOpaque
	}
	return false
}

// isInt is types.IsInteger, accepting opaque kernel types.
func isInt(t types.Type) bool {
	return types.IsInteger(t) || t != nil && types.Underlying(t).Kind() == types.KindOpaque
}

// isScalar is types.IsScalar, accepting opaque kernel types.
func isScalar(t types.Type) bool { return types.IsScalar(t) || isOpaque(t) }

// isStrCompat is dtrace's dt_node_is_strcompat plus string itself.
func isStrCompat(t types.Type) bool { return types.IsStringLike(t) }

func isPtrLike(t types.Type) bool { return types.IsPointer(t) || types.IsArray(t) }

// isVoidFuncPtr reports a pointer to void or to a function (dtrace's
// "vfptr"), on which pointer arithmetic is not allowed.
func isVoidFuncPtr(t types.Type) bool {
	p, ok := types.Underlying(t).(*types.Pointer)
	if !ok {
		return false
	}
	k := types.Underlying(p.Elem).Kind()
	return k == types.KindVoid || k == types.KindFunc
}

// ptrCompat is dtrace's dt_node_is_ptrcompat: pointers (or arrays) to the
// same type, a void pointer on either side, or a pointer and constant 0.
func (c *checker) ptrCompat(xe syntax.Expr, x TypeAndValue, ye syntax.Expr, y TypeAndValue) bool {
	if types.Underlying(x.Type).Kind() == types.KindDyn || types.Underlying(y.Type).Kind() == types.KindDyn {
		return false
	}
	xi, yi := isInt(x.Type), isInt(y.Type)
	if xi && yi {
		return false
	}
	isZero := func(e syntax.Expr, tv TypeAndValue) bool {
		lit := false
		switch u := syntax.Unparen(e).(type) {
		case *syntax.IntLit:
			lit = true
		case *syntax.Ident:
			_, lit = c.info.Uses[u].(*Inline)
		}
		return lit && tv.Value != nil && !tv.Value.IsStr && tv.Value.Int == 0
	}
	if xi && !isZero(xe, x) || yi && !isZero(ye, y) {
		return false
	}
	xt, yt := x.Type, y.Type
	if xi {
		xt = yt
	}
	if yi {
		yt = xt
	}
	if !isPtrLike(xt) && !types.IsString(xt) || !isPtrLike(yt) && !types.IsString(yt) {
		return false
	}
	xe2, ye2 := elemOf(xt), elemOf(yt)
	return types.IsVoid(xe2) || types.IsVoid(ye2) || types.Identical(xe2, ye2)
}

// elemOf is types.Elem, with D strings as arrays of char.
func elemOf(t types.Type) types.Type {
	if types.IsString(t) {
		return types.Char
	}
	return types.Elem(t)
}

// foldBinary evaluates a binary operator on constants. err is set for a
// division by zero.
func foldBinary(op syntax.Token, x, y TypeAndValue, t types.Type) (*Const, bool, string) {
	if x.Value.IsStr || y.Value.IsStr {
		if x.Value.IsStr && y.Value.IsStr && isCompare(op) {
			a, b := x.Value.Str, y.Value.Str
			var r bool
			switch op {
			case syntax.EQL:
				r = a == b
			case syntax.NEQ:
				r = a != b
			case syntax.LSS:
				r = a < b
			case syntax.GTR:
				r = a > b
			case syntax.LEQ:
				r = a <= b
			case syntax.GEQ:
				r = a >= b
			}
			return intConst(b2i(r)), true, ""
		}
		return nil, false, ""
	}
	if !isInt(t) {
		return nil, false, ""
	}
	a, b := x.Value.Int, y.Value.Int
	// Comparisons use the operands' common type.
	ct := t
	if isCompare(op) || op == syntax.LAND || op == syntax.LOR || op == syntax.LXOR {
		if isInt(x.Type) && isInt(y.Type) {
			ct = types.ArithResult(x.Type, y.Type)
		}
	}
	// dtrace folds in 64 bits without truncating to the result type
	// (dt_node_op2); signedness picks the division and comparison.
	unsigned := !types.IsSigned(ct)
	var v int64
	switch op {
	case syntax.ADD:
		v = a + b
	case syntax.SUB:
		v = a - b
	case syntax.MUL:
		v = a * b
	case syntax.QUO, syntax.REM:
		if b == 0 {
			return nil, false, "expression contains division by zero"
		}
		switch {
		case unsigned && op == syntax.QUO:
			v = int64(uint64(a) / uint64(b))
		case unsigned:
			v = int64(uint64(a) % uint64(b))
		case op == syntax.QUO:
			if b == -1 {
				v = -a
			} else {
				v = a / b
			}
		default:
			if b == -1 {
				v = 0
			} else {
				v = a % b
			}
		}
	case syntax.AND:
		v = a & b
	case syntax.OR:
		v = a | b
	case syntax.XOR:
		v = a ^ b
	case syntax.SHL:
		v = a << uint64(b&63)
	case syntax.SHR:
		if unsigned {
			v = int64(uint64(a) >> uint64(b&63))
		} else {
			v = a >> uint64(b&63)
		}
	case syntax.LAND:
		v = b2i(a != 0 && b != 0)
	case syntax.LOR:
		v = b2i(a != 0 || b != 0)
	case syntax.LXOR:
		v = b2i((a != 0) != (b != 0))
	case syntax.EQL:
		v = b2i(a == b)
	case syntax.NEQ:
		v = b2i(a != b)
	case syntax.LSS, syntax.GTR, syntax.LEQ, syntax.GEQ:
		var lt, eq bool
		if unsigned {
			lt, eq = uint64(a) < uint64(b), a == b
		} else {
			lt, eq = a < b, a == b
		}
		switch op {
		case syntax.LSS:
			v = b2i(lt)
		case syntax.GTR:
			v = b2i(!lt && !eq)
		case syntax.LEQ:
			v = b2i(lt || eq)
		case syntax.GEQ:
			v = b2i(!lt)
		}
		return intConst(v), true, ""
	default:
		return nil, false, ""
	}
	return intConst(v), true, ""
}

// cond checks c ? x : y.
func (c *checker) cond(e *syntax.CondExpr) TypeAndValue {
	cv := c.expr(e.Cond)
	if cv.Type == nil {
		return bad
	}
	if !isScalar(cv.Type) {
		return c.fail(c.after(e), D_OP_SCALAR, "operator ?: expression must be of scalar type")
	}
	x := c.expr(e.X)
	if x.Type == nil {
		return bad
	}
	y := c.expr(e.Y)
	if y.Type == nil {
		return bad
	}
	if c.flags[e.X].action || c.flags[e.Y].action {
		return c.fail(c.after(e), D_OP_ACT, "action cannot be used in a conditional context")
	}
	var t types.Type
	switch {
	case isInt(x.Type) && isInt(y.Type):
		t = types.ArithResult(x.Type, y.Type)
	case isStrCompat(x.Type) && isStrCompat(y.Type) && (types.IsString(x.Type) || types.IsString(y.Type)):
		t = c.strType
	case types.Identical(x.Type, y.Type):
		t = x.Type
	case c.ptrCompat(e.X, x, e.Y, y):
		t = x.Type
		if isInt(t) || types.IsVoid(types.Elem(t)) {
			t = y.Type
		}
	default:
		return c.fail(c.after(e), D_OP_INCOMPAT, "operator ?: operands must have compatible types")
	}
	tv := TypeAndValue{Type: t, Alloca: x.Alloca && y.Alloca}
	fl := exprFlags{mixed: isPtrLike(t) && x.Alloca != y.Alloca}
	if cv.Value != nil && x.Value != nil && y.Value != nil && !cv.Value.IsStr {
		if cv.Value.Int != 0 {
			tv.Value = x.Value
		} else {
			tv.Value = y.Value
		}
	}
	return c.record(e, tv, fl)
}

// member checks x.m and x->m.
func (c *checker) member(e *syntax.MemberExpr) TypeAndValue {
	x := c.expr(e.X)
	if x.Type == nil {
		return bad
	}
	op := "."
	t := x.Type
	if isOpaque(t) || isOpaque(types.Elem(t)) {
		// No kernel types: members of kernel structs are unknown.
		return c.record(e, TypeAndValue{Type: c.kernelType("<unknown>"), Lvalue: true}, exprFlags{writable: true})
	}
	if e.Arrow {
		op = "->"
		p, ok := types.Underlying(t).(*types.Pointer)
		if !ok {
			return c.fail(c.last(e), D_OP_PTR, "operator %s must be applied to a pointer", op)
		}
		t = p.Elem
	}
	u := types.Underlying(t)
	s, ok := u.(*types.Struct)
	if !ok {
		if u.Kind() == types.KindOpaque {
			// No kernel types: members of kernel structs are unknown.
			return c.record(e, TypeAndValue{Type: types.Int64, Lvalue: true}, exprFlags{})
		}
		if e.Arrow {
			return c.fail(c.last(e), D_OP_SOU, "operator -> cannot be applied to pointer to type \"%s\"; must be applied to a struct or union pointer", types.TypeString(t))
		}
		return c.fail(c.last(e), D_OP_SOU, "operator %s cannot be applied to type \"%s\"; must be applied to a struct or union", op, types.TypeString(t))
	}
	if !s.Complete {
		kw := "struct"
		if s.Union {
			kw = "union"
		}
		return c.fail(c.last(e), D_OP_INCOMPLETE, "operator %s cannot be applied to a forward declaration: no %s %s definition is available", op, kw, s.Tag)
	}
	f, off, ok := s.Field(e.Name.Name)
	if !ok {
		return c.fail(c.after(e.Name), D_TYPE_MEMBER, "%s is not a member of %s", e.Name.Name, types.TypeString(t))
	}
	tr := c.xlatorOf(e.X)
	if tr != nil && tr.Member[e.Name.Name] == nil {
		return c.fail(c.last(e), D_XLATE_NOCONV, "translator does not define conversion for member: %s", e.Name.Name)
	}
	c.info.Members[e] = &Member{Struct: s, Field: f, Offset: off, Xlator: tr}
	lv := !types.IsArray(f.Type) || types.IsString(f.Type)
	fl := exprFlags{writable: c.flags[e.X].writable && !e.Arrow, bitfield: f.Bits > 0,
		inAlloca: e.Arrow && x.Alloca || !e.Arrow && c.flags[e.X].inAlloca}
	if e.Arrow {
		fl.writable = true // a pointer target is writable storage
	}
	return c.record(e, TypeAndValue{Type: f.Type, Lvalue: lv}, fl)
}

// xlatorOf returns the translator that produces the value of e, if e is a
// translation or an inline defined as one.
func (c *checker) xlatorOf(e syntax.Expr) *Translator {
	switch x := c.info.Translation(e).(type) {
	case *syntax.XlateExpr:
		return c.info.Xlates[x]
	case *syntax.IndexExpr:
		return c.info.ArgXlators[x]
	}
	return nil
}

// Translation returns the translation whose value e is: the xlate
// expression, or the index expression of a translated argument
// (args[i]), that it names through parentheses, dereferences and
// inlines; nil if e names none.
func (info *Info) Translation(e syntax.Expr) syntax.Expr {
	for i := 0; i < 8; i++ {
		switch x := syntax.Unparen(e).(type) {
		case *syntax.XlateExpr, *syntax.IndexExpr:
			return x
		case *syntax.UnaryExpr:
			if x.Op != syntax.MUL {
				return nil
			}
			e = x.X
		case *syntax.Ident:
			in, ok := info.Uses[x].(*Inline)
			if !ok {
				return nil
			}
			e = in.Value
		default:
			return nil
		}
	}
	return nil
}

// dynamicName returns what dtrace calls a dynamic expression, one whose
// value is a translation not yet taken apart (xlate<T>(x), or an inline
// defined as one, such as curpsinfo): "translated data" or "pointer to
// translated data". It returns "" for any other expression. Such a value
// may be dereferenced or have members taken, but not be traced, used as
// a key, have its address taken or stand alone as a statement.
func (c *checker) dynamicName(e syntax.Expr) string {
	for i := 0; i < 8; i++ {
		switch x := syntax.Unparen(e).(type) {
		case *syntax.XlateExpr:
			if types.IsPointer(c.info.Types[x].Type) {
				return "pointer to translated data"
			}
			return "translated data"
		case *syntax.Ident:
			in, ok := c.info.Uses[x].(*Inline)
			if !ok || in.Value == nil || len(in.Params) > 0 {
				return ""
			}
			e = in.Value
		default:
			return ""
		}
	}
	return ""
}

// xlate checks xlate<T>(x).
func (c *checker) xlate(e *syntax.XlateExpr) TypeAndValue {
	t, x, ok := c.typeAndOperand(e.Type, e.X)
	if !ok {
		return bad
	}
	out := t
	ptr := false
	if p, ok := types.Underlying(t).(*types.Pointer); ok {
		out, ptr = p.Elem, true
	}
	for _, tr := range c.info.Translators {
		if !types.Identical(tr.Out, out) {
			continue
		}
		in := x.Type
		if ptr {
			if p, ok := types.Underlying(in).(*types.Pointer); ok {
				in = p.Elem
			}
		}
		if types.Identical(tr.In, in) || types.Identical(tr.In, x.Type) ||
			(types.IsPointer(tr.In) && types.IsPointer(x.Type) && types.Identical(types.Elem(tr.In), types.Elem(x.Type))) {
			c.info.Xlates[e] = tr
			return c.record(e, TypeAndValue{Type: t}, exprFlags{})
		}
	}
	return c.fail(c.last(e), D_XLATE_NONE, "cannot translate from \"%s\" to \"%s\"", types.TypeString(x.Type), types.TypeString(t))
}
