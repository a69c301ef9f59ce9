package check

import (
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// checkSig checks a call's arguments against a prototype, with dtrace's
// D_PROTO_LEN and D_PROTO_ARG messages. tvs are the checked arguments.
func (c *checker) checkSig(pos syntax.Pos, name string, s *sig, args []syntax.Expr, tvs []TypeAndValue) bool {
	argc := len(args)
	mismatch, limit, cmp := false, len(s.params), 0
	switch {
	case s.variadic:
		mismatch, limit, cmp = argc < len(s.params), len(s.params), 1
	case s.optional >= 0:
		switch {
		case argc < s.optional:
			mismatch, limit, cmp = true, s.optional, 1
		case argc > len(s.params):
			mismatch, limit, cmp = true, len(s.params), -1
		default:
			limit = argc
		}
	default:
		mismatch = argc != len(s.params)
	}
	if mismatch {
		pl := "s "
		if argc == 1 {
			pl = " "
		}
		q := ""
		if cmp > 0 {
			q = "at least "
		} else if cmp < 0 {
			q = "at most "
		}
		c.errorf(pos, D_PROTO_LEN, "%s( ) prototype mismatch: %d arg%spassed, %s%d expected", name, argc, pl, q, limit)
		return false
	}
	for i := 0; i < limit && i < argc; i++ {
		pt := s.params[i]
		if pt == nil {
			continue
		}
		if !c.argCompat(pt, args[i], tvs[i]) {
			c.errorf(pos, D_PROTO_ARG, "%s( ) argument #%d is incompatible with prototype:\n\tprototype: %s\n\t%9s: %s",
				name, i+1, types.TypeString(pt), "argument", types.TypeString(tvs[i].Type))
			return false
		}
	}
	return true
}

// args checks call arguments; aggregations are allowed where a function
// takes one.
func (c *checker) args(args []syntax.Expr) ([]TypeAndValue, bool) {
	tvs := make([]TypeAndValue, len(args))
	for i, a := range args {
		tvs[i] = c.expr(a)
		if tvs[i].Type == nil {
			return nil, false
		}
	}
	return tvs, true
}

// aggRef checks an aggregation named as a value (an argument of printa,
// clear, trunc, ...).
func (c *checker) aggRef(e *syntax.AggExpr) TypeAndValue {
	if a, ok := c.aggs[e.Name]; ok {
		c.info.Uses[e] = a
		c.clauseAgg(a)
	}
	if len(e.Keys) > 0 {
		return c.fail(c.after(e), D_AGG_NULL, "expression has null effect: @%s", e.Name)
	}
	return c.record(e, TypeAndValue{Type: types.Agg}, exprFlags{isVar: true})
}

func (c *checker) clauseAgg(a *Agg) {
	if c.clause == nil {
		return
	}
	for _, b := range c.clause.Aggs {
		if a == b {
			return
		}
	}
	c.clause.Aggs = append(c.clause.Aggs, a)
}

// call checks a function call. stmt is set for a call that is a whole
// statement, where actions are allowed.
func (c *checker) call(e *syntax.CallExpr, stmt bool) TypeAndValue {
	id, ok := syntax.Unparen(e.Fun).(*syntax.Ident)
	if !ok {
		c.expr(e.Fun)
		return c.fail(c.last(e), D_FUNC_IDENT, "function designator is not of function type")
	}
	fi, ok := c.funcs[id.Name]
	fi = c.resolve(fi)
	if !ok || id.Scoped {
		if _, isVar := c.globals[id.Name]; isVar {
			return c.fail(c.last(e), D_FUNC_IDKIND, "scalar '%s' may not be referenced as a function", id.Name)
		}
		if _, isB := c.builtins[id.Name]; isB {
			return c.fail(c.last(e), D_FUNC_IDKIND, "scalar '%s' may not be referenced as a function", id.Name)
		}
		return c.fail(c.last(e), D_FUNC_UNDEF, "undefined function name: %s", id.Name)
	}
	fn := fi.fn
	c.info.Calls[e] = fn
	// Some rules dtrace applies while generating code, after the whole
	// clause has been checked: they are deferred to the end of the clause,
	// in the order dtrace would meet them. An action statement records its
	// own checks before those of its arguments.
	slot := -1
	if stmt {
		slot = c.reserve()
	}
	tvs, ok := c.args(e.Args)
	if !ok {
		return bad
	}
	if fn.Kind == AggFunc {
		// Only `@x = f(...)` may call an aggregating function.
		c.defer1(slot, func() bool {
			c.errorf(c.last(e), D_CG_EXPR, "aggregating function %s( ) may not be called from a D expression (D program context required)", fn.Name)
			return false
		})
		return c.record(e, TypeAndValue{Type: types.Void}, exprFlags{aggCall: true})
	}
	if !c.checkSig(c.last(e), fn.Name, fi.sig, e.Args, tvs) {
		return bad
	}
	if fn.Destructive && c.clause != nil {
		c.clause.Destructive = true
	}
	if fi.def.class == actSpeculate && c.clause != nil {
		c.clause.Speculative = true
	}
	fl := exprFlags{}
	if fn.Kind == Action && types.IsVoid(fn.Result) {
		fl.action = true
	}
	order := c.clause != nil && (stmt && fn.Kind == Action || fi.def.class == actDestruct)
	pos := c.stmtPos(e)
	c.defer1(slot, func() bool {
		if order && !c.actionOrder(pos, fi.def.class) {
			return false
		}
		if r := fi.def.before; r != nil && !r(c, e, fn, tvs) {
			return false
		}
		if r := fi.def.after; r != nil && !r(c, e, fn, tvs) {
			return false
		}
		return true
	})
	return c.record(e, TypeAndValue{Type: fn.Result, Alloca: fi.def.alloca}, fl)
}

// traceRule: trace() takes neither a void nor a dynamic expression.
func (c *checker) traceRule(e *syntax.CallExpr, fn *Func, tvs []TypeAndValue) bool {
	if len(tvs) == 1 && types.IsVoid(tvs[0].Type) {
		c.errorf(c.last(e), D_TRACE_VOID, "trace( ) may not be applied to a void expression")
		return false
	}
	if k := types.Underlying(tvs[0].Type).Kind(); len(tvs) == 1 && (k == types.KindDyn || k == types.KindAgg || c.dynamicName(e.Args[0]) != "") {
		c.errorf(c.last(e), D_TRACE_DYN, "trace( ) may not be applied to a dynamic expression")
		return false
	}
	return true
}

// aggArgRule returns the rule of a function whose argument #1 is a
// defined aggregation, with the tags of its two errors.
func aggArgRule(argTag, badTag Tag) callRule {
	return func(c *checker, e *syntax.CallExpr, fn *Func, tvs []TypeAndValue) bool {
		if len(tvs) >= 1 {
			ae, ok := syntax.Unparen(e.Args[0]).(*syntax.AggExpr)
			if !ok {
				c.errorf(c.last(e), argTag, "%s( ) argument #1 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: %s", fn.Name, types.TypeString(tvs[0].Type))
				return false
			}
			if c.aggs[ae.Name] == nil {
				c.errorf(c.last(e), badTag, "undefined aggregation: @%s", ae.Name)
				return false
			}
		}
		return true
	}
}

// normalizeRule: normalize() takes an aggregation and a scalar.
func normalizeRule(c *checker, e *syntax.CallExpr, fn *Func, tvs []TypeAndValue) bool {
	if !aggArgRule(D_NORMALIZE_AGGARG, D_NORMALIZE_AGGBAD)(c, e, fn, tvs) {
		return false
	}
	if len(tvs) >= 2 && !isScalar(tvs[1].Type) {
		c.errorf(c.last(e), D_NORMALIZE_SCALAR, "%s( ) argument #2 must be of scalar type", fn.Name)
		return false
	}
	return true
}

// constArg returns the value of argument i when it is an integer
// constant.
func constArg(tvs []TypeAndValue, i int) (int64, bool) {
	if i >= len(tvs) || tvs[i].Value == nil || tvs[i].Value.IsStr || !isInt(tvs[i].Type) {
		return 0, false
	}
	return tvs[i].Value.Int, true
}

// stackRule: stack()'s depth is a positive constant.
func (c *checker) stackRule(e *syntax.CallExpr, fn *Func, tvs []TypeAndValue) bool {
	if len(tvs) == 1 {
		if v, ok := constArg(tvs, 0); !ok || v <= 0 {
			c.errorf(c.last(e), D_STACK_SIZE, "stack( ) argument #1 must be a non-zero positive integer constant")
			return false
		}
	}
	return true
}

// ustackRule: ustack()'s and jstack()'s depth and string size are
// constants.
func (c *checker) ustackRule(e *syntax.CallExpr, fn *Func, tvs []TypeAndValue) bool {
	if len(tvs) >= 1 {
		if v, ok := constArg(tvs, 0); !ok || v <= 0 {
			c.errorf(c.last(e), D_USTACK_FRAMES, "%s( ) argument #1 must be a non-zero positive integer constant", fn.Name)
			return false
		}
	}
	if len(tvs) >= 2 {
		if v, ok := constArg(tvs, 1); !ok || v < 0 {
			c.errorf(c.last(e), D_USTACK_STRSIZE, "%s( ) argument #2 must be a positive integer constant", fn.Name)
			return false
		}
	}
	return true
}

// allocaArgRule returns the rule of a function whose argument i (from
// 0) points to alloca() memory.
func allocaArgRule(i int) callRule {
	return func(c *checker, e *syntax.CallExpr, fn *Func, tvs []TypeAndValue) bool {
		if !tvs[i].Alloca {
			c.errorf(c.after(e.Args[i]), D_PROTO_ARG, "%s( ) argument #%d is incompatible with prototype:\n\tprototype: alloca pointer\n\t argument: non-alloca pointer", fn.Name, i+1)
			return false
		}
		return true
	}
}

// inetNtoa6Rule: inet_ntoa6()'s flags are a constant.
func (c *checker) inetNtoa6Rule(e *syntax.CallExpr, fn *Func, tvs []TypeAndValue) bool {
	if len(tvs) > 1 && tvs[1].Value == nil {
		c.errorf(c.after(e.Args[1]), D_PROTO_ARG, "inet_ntoa6( ) argument #2 must be an integer constant")
		return false
	}
	return true
}

// printRule: print() takes any value, as illumos's does (dtrace-utils
// takes only pointers); a pointer needs an object of known size, but for
// a void pointer, whose value prints.
func (c *checker) printRule(e *syntax.CallExpr, fn *Func, tvs []TypeAndValue) bool {
	if len(tvs) != 1 {
		return true // the prototype check counts the arguments
	}
	if types.IsVoid(tvs[0].Type) {
		c.errorf(c.last(e), D_PRINT_VOID, "print( ) may not be applied to a void expression")
		return false
	}
	if k := types.Underlying(tvs[0].Type).Kind(); k == types.KindDyn || k == types.KindAgg || c.dynamicName(e.Args[0]) != "" {
		c.errorf(c.last(e), D_PRINT_DYN, "print( ) may not be applied to a dynamic expression")
		return false
	}
	// A void pointer has nothing to point at: it prints as a pointer,
	// as illumos prints every pointer.
	if p, ok := types.Underlying(tvs[0].Type).(*types.Pointer); ok && p.Elem.Size() == 0 && !isOpaque(p) && !types.IsVoid(p.Elem) {
		c.errorf(c.after(e.Args[0]), D_PRINT_SIZE, "print( ) argument #1 reference has type '%s' with size 0; cannot print( ) it.", types.TypeString(p.Elem))
		return false
	}
	return true
}

// tracememRule: tracemem() takes an address and a constant size.
func (c *checker) tracememRule(e *syntax.CallExpr, fn *Func, tvs []TypeAndValue) bool {
	if !isInt(tvs[0].Type) && !isPtrLike(tvs[0].Type) {
		c.errorf(c.last(e), D_TRACEMEM_ADDR, "tracemem( ) argument #1 is incompatible with prototype:\n\tprototype: pointer or integer\n\t argument: %s", types.TypeString(tvs[0].Type))
		return false
	}
	if v, ok := constArg(tvs, 1); !ok || v <= 0 {
		c.errorf(c.last(e), D_TRACEMEM_SIZE, "tracemem( ) argument #2 must be a non-zero positive integral constant expression")
		return false
	}
	return true
}

// scratchSizeRule returns the rule of a function taking alloca() memory
// of the constant size in argument i: it must fit in scratchsize.
func scratchSizeRule(i int) callRule {
	return func(c *checker, e *syntax.CallExpr, fn *Func, tvs []TypeAndValue) bool {
		if v, ok := constArg(tvs, i); ok && c.scratchSize > 0 && uint64(v) > uint64(c.scratchSize) {
			c.errorf(c.last(e), D_ALLOCA_SIZE, "%s(%d) size larger than scratchsize %d", fn.Name, uint64(v), c.scratchSize)
			return false
		}
		return true
	}
}

// printaRule checks printa()'s format and aggregations.
func (c *checker) printaRule(e *syntax.CallExpr, fn *Func, tvs []TypeAndValue) bool {
	return c.checkPrinta(e, tvs)
}

// funcKindName names a kind of function as dtrace's messages do.
func funcKindName(k FuncKind) string {
	switch k {
	case Action:
		return "tracing function"
	case AggFunc:
		return "aggregating function"
	}
	return "function"
}

// aggAssign checks `@name[keys] = func(args)`.
func (c *checker) aggAssign(e *syntax.AssignExpr, ae *syntax.AggExpr) TypeAndValue {
	call, ok := syntax.Unparen(e.Y).(*syntax.CallExpr)
	var fi *funcInfo
	if ok {
		if id, ok2 := syntax.Unparen(call.Fun).(*syntax.Ident); ok2 {
			fi = c.resolve(c.funcs[id.Name])
		}
	}
	if fi == nil || fi.fn.Kind != AggFunc {
		if fi == nil && call != nil {
			if id, ok2 := syntax.Unparen(call.Fun).(*syntax.Ident); ok2 {
				return c.fail(c.after(e), D_FUNC_UNDEF, "undefined function name: %s", id.Name)
			}
		}
		if fi == nil && call == nil {
			if y := c.expr(e.Y); y.Type == nil {
				return bad
			}
		}
		return c.fail(c.after(e), D_AGG_FUNC, "@%s must be assigned the result of an aggregating function", ae.Name)
	}
	fn := fi.fn
	a := c.aggs[ae.Name]
	if a != nil && a.Func != fn.Name {
		line := 0
		if c.fset != nil {
			line = c.fset.Position(a.Pos).Line
		}
		return c.fail(c.after(e), D_AGG_REDEF, "aggregation redefined: @%s\n\t current: @%s = %s( )\n\tprevious: @%s = %s( ) : line %d",
			ae.Name, ae.Name, fn.Name, ae.Name, a.Func, line)
	}
	// Keys.
	var keys []types.Type
	if a != nil && a.Keys != nil {
		if !c.checkKeys(c.after(ae), "@"+ae.Name+"[ ]", "", ae.Keys, a.Keys, "aggregation") {
			return bad
		}
		keys = a.Keys
	} else {
		for i, k := range ae.Keys {
			tv := c.expr(k)
			if tv.Type == nil {
				return bad
			}
			if !c.keyOK(k, tv, i, "aggregation") {
				return bad
			}
			t := tv.Type
			if types.IsCharArray(t) || (tv.Value != nil && tv.Value.IsStr) {
				t = c.strType
			}
			keys = append(keys, t)
		}
		if a != nil && len(keys) > 0 && a.Keys == nil && a.ID >= 0 && len(a.Keys) != len(keys) {
			if !c.checkKeys(c.after(ae), "@"+ae.Name+"[ ]", "", ae.Keys, a.Keys, "aggregation") {
				return bad
			}
		}
	}
	c.info.Calls[call] = fn
	tvs, ok := c.args(call.Args)
	if !ok {
		return bad
	}
	if !c.checkSig(c.last(call), fn.Name, fi.sig, call.Args, tvs) {
		return bad
	}
	if a == nil {
		a = &Agg{Name: ae.Name, ID: len(c.info.Aggs), Func: fn.Name, Keys: keys, Pos: e.Pos()}
		if a.Keys == nil {
			a.Keys = []types.Type{}
		}
		if len(tvs) > 0 {
			a.Arg = tvs[0].Type
		}
		c.aggs[ae.Name] = a
		c.info.Aggs = append(c.info.Aggs, a)
	}
	c.info.Uses[ae] = a
	c.record(ae, TypeAndValue{Type: types.Agg}, exprFlags{isVar: true})
	c.clauseAgg(a)
	pos := c.stmtPos(e)
	c.defer1(-1, func() bool {
		if !c.aggOrder(pos) {
			return false
		}
		if fi.def.scalarArg && len(tvs) > 0 && !isScalar(tvs[0].Type) {
			c.errorf(c.last(call), D_AGG_SCALAR, "%s( ) argument #1 must be of scalar type", fn.Name)
			return false
		}
		var prev *Agg
		if a.Params != nil {
			prev = a
		}
		var params []int64
		if fi.def.params != nil {
			var ok bool
			if params, ok = fi.def.params(c, call, tvs, prev); !ok {
				return false
			}
		}
		if argmax := fi.def.incrArg; argmax > 0 && len(tvs) >= argmax {
			if !isScalar(tvs[argmax-1].Type) {
				c.errorf(c.last(call), D_PROTO_ARG, "%s( ) increment value (argument #%d) must be of scalar type", fn.Name, argmax)
				return false
			}
			if len(tvs) > argmax {
				c.errorf(c.after(call.Args[argmax]), D_PROTO_LEN, "%s( ) prototype mismatch: %d args passed, at most %d expected", fn.Name, len(tvs), argmax)
				return false
			}
		}
		if a.Params == nil {
			a.Params = params
		}
		return true
	})
	return c.record(e, TypeAndValue{Type: types.Void}, exprFlags{})
}

// constParam returns argument i of the aggregating function name, which
// must be an integer constant (typeTag) that valid accepts (valTag: it
// must be what); errors are reported at pos.
func (c *checker) constParam(tvs []TypeAndValue, pos syntax.Pos, name string, i int, typeTag, valTag Tag, valid func(int64) bool, what string) (int64, bool) {
	v, ok := constArg(tvs, i)
	if !ok {
		c.errorf(pos, typeTag, "%s( ) argument #%d must be an integer constant", name, i)
		return 0, false
	}
	if !valid(v) {
		c.errorf(pos, valTag, "%s( ) argument #%d must be %s", name, i, what)
		return 0, false
	}
	return v, true
}

// lquantizeParams checks the constant parameters of lquantize and
// returns them.
func (c *checker) lquantizeParams(call *syntax.CallExpr, tvs []TypeAndValue, prev *Agg) ([]int64, bool) {
	arg := func(i int) (int64, bool) { return constArg(tvs, i) }
	pos := c.last(call)
	is32 := func(v int64) bool { return v == int64(int32(v)) }
	base, ok := c.constParam(tvs, pos, "lquantize", 1, D_LQUANT_BASETYPE, D_LQUANT_BASEVAL, is32, "a 32-bit quantity")
	if !ok {
		return nil, false
	}
	lim, ok := c.constParam(tvs, pos, "lquantize", 2, D_LQUANT_LIMTYPE, D_LQUANT_LIMVAL, is32, "a 32-bit quantity")
	if !ok {
		return nil, false
	}
	if lim <= base {
		c.errorf(pos, D_LQUANT_MISMATCH, "lquantize( ) base (argument #1) must be less than limit (argument #2)")
		return nil, false
	}
	step := int64(1)
	if len(tvs) > 3 {
		step, ok = arg(3)
		if !ok || step <= 0 {
			c.errorf(pos, D_LQUANT_STEPTYPE, "lquantize( ) argument #3 must be a non-zero positive integer constant")
			return nil, false
		}
		if step != int64(uint16(step)) {
			c.errorf(pos, D_LQUANT_STEPVAL, "lquantize( ) argument #3 must be a 16-bit quantity")
			return nil, false
		}
	}
	levels := (lim - base) / step
	if levels == 0 {
		c.errorf(pos, D_LQUANT_STEPLARGE, "lquantize( ) step (argument #3) too large: must have at least one quantization level")
		return nil, false
	}
	if levels > 0xffff {
		c.errorf(pos, D_LQUANT_STEPSMALL, "lquantize( ) step (argument #3) too small: number of quantization levels must be a 16-bit quantity")
		return nil, false
	}
	if prev != nil && len(prev.Params) == 3 {
		ob, ol, os := prev.Params[0], prev.Params[1], prev.Params[2]
		onlevels := (ol - ob) / os
		switch {
		case ob != base:
			c.errorf(pos, D_LQUANT_MATCHBASE, "lquantize( ) base (argument #1) doesn't match previous declaration: expected %d, found %d", ob, base)
			return nil, false
		case ob+onlevels*os != lim:
			c.errorf(pos, D_LQUANT_MATCHLIM, "lquantize( ) limit (argument #2) doesn't match previous declaration: expected %d, found %d", ob+onlevels*os, lim)
			return nil, false
		case os != step:
			c.errorf(pos, D_LQUANT_MATCHSTEP, "lquantize( ) step (argument #3) doesn't match previous declaration: expected %d, found %d", os, step)
			return nil, false
		}
	}
	return []int64{base, lim, step}, true
}

// llquantizeParams checks the constant parameters of llquantize and
// returns them.
func (c *checker) llquantizeParams(call *syntax.CallExpr, tvs []TypeAndValue, prev *Agg) ([]int64, bool) {
	arg := func(i int) (int64, bool) { return constArg(tvs, i) }
	argPos := func(i int) syntax.Pos { return c.after(call.Args[i]) }
	u16 := func(v int64) bool { return uint64(v) <= 0xffff }
	factor, ok := c.constParam(tvs, argPos(1), "llquantize", 1, D_LLQUANT_FACTORTYPE, D_LLQUANT_FACTORVAL,
		func(v int64) bool { return u16(v) && v >= 2 }, "an unsigned 16-bit quantity greater than or equal to 2")
	if !ok {
		return nil, false
	}
	low, ok := c.constParam(tvs, argPos(2), "llquantize", 2, D_LLQUANT_LMAGTYPE, D_LLQUANT_LMAGVAL, u16, "an unsigned 16-bit quantity")
	if !ok {
		return nil, false
	}
	high, ok := c.constParam(tvs, argPos(3), "llquantize", 3, D_LLQUANT_HMAGTYPE, D_LLQUANT_HMAGVAL, u16, "an unsigned 16-bit quantity")
	if !ok {
		return nil, false
	}
	if high < low {
		c.errorf(argPos(3), D_LLQUANT_HMAGVAL, "llquantize( ) argument #3 (high magnitude) must be at least argument #2 (low magnitude)")
		return nil, false
	}
	if pow(factor, high+1) == 0 {
		c.errorf(argPos(3), D_LLQUANT_HMAGVAL, "llquantize( ) argument #3 (high magnitude) will cause overflow of 64 bits")
		return nil, false
	}
	steps, ok := arg(4)
	if !ok || steps <= 0 {
		c.errorf(argPos(4), D_LLQUANT_STEPTYPE, "llquantize( ) argument #4 must be a non-zero positive integer constant")
		return nil, false
	}
	if steps > 0xffff {
		c.errorf(argPos(4), D_LLQUANT_STEPVAL, "llquantize( ) argument #4 must be an unsigned 16-bit quantity")
		return nil, false
	}
	if steps < factor && factor%steps != 0 {
		c.errorf(argPos(1), D_LLQUANT_STEPVAL, "llquantize() argument #4 (steps) must evenly divide argument #1 (factor) when steps<factor")
		return nil, false
	}
	if steps > factor {
		if steps%factor != 0 {
			c.errorf(argPos(1), D_LLQUANT_STEPVAL, "llquantize() argument #4 (steps) must be a multiple of argument #1 (factor) when steps>factor")
			return nil, false
		}
		if low == 0 {
			if (factor*factor)%steps != 0 {
				c.errorf(argPos(1), D_LLQUANT_STEPVAL, "llquantize() argument #4 (steps) must evenly divide the square of argument #1 (factor) when steps>factor and lmag==0")
				return nil, false
			}
		} else if p := pow(factor, low+1); p == 0 || p%uint64(steps) != 0 {
			c.errorf(argPos(1), D_LLQUANT_STEPVAL, "llquantize() argument #4 (steps) must evenly divide pow(argument #1 (factor), lmag (argument #2) + 1) when steps>factor and lmag>0")
			return nil, false
		}
	}
	params := []int64{factor, low, high, steps}
	if prev != nil && len(prev.Params) == 4 {
		pos := c.after(call)
		for i, m := range llquantizeParams {
			if prev.Params[i] != params[i] {
				c.errorf(pos, m.tag, "llquantize() %s doesn't match previous declaration: expected %d, found %d", m.what, prev.Params[i], params[i])
				return nil, false
			}
		}
	}
	return params, true
}

// llquantizeParams name llquantize()'s parameters in the errors that
// say one differs from an earlier declaration's.
var llquantizeParams = [4]struct {
	tag  Tag
	what string
}{
	{D_LLQUANT_MATCHFACTOR, "factor (argument #1)"},
	{D_LLQUANT_MATCHLMAG, "lmag (argument #2)"},
	{D_LLQUANT_MATCHHMAG, "hmag (argument #3)"},
	{D_LLQUANT_MATCHSTEPS, "steps (argument #4)"},
}

// pow returns b**e, or 0 if it overflows 64 bits.
func pow(b, e int64) uint64 {
	r := uint64(1)
	for ; e > 0; e-- {
		hi := r * uint64(b)
		if hi/uint64(b) != r {
			return 0
		}
		r = hi
	}
	return r
}
