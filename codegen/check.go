package codegen

import (
	"strings"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
	"github.com/dtrace-go/dtrace/program"
)

// Generate compiles a checked program into a Spec.
func Generate(info *check.Info, opts Options) (*program.Spec, error) {
	if opts.StrSize == 0 && info.StrSize > 0 {
		opts.StrSize = uint32(info.StrSize)
	}
	opts.defaults()
	a := &checkInfo{info: info, strsize: opts.StrSize, types: map[types.Type]*program.Type{}, vars: map[any]*Var{}, aggs: map[*check.Agg]*AggInfo{}}
	var cl []Clause
	for _, c := range info.Clauses {
		cl = append(cl, Clause{Decl: c.Decl, Probes: c.Probes})
	}
	return GenerateClauses(cl, a, opts)
}

// checkInfo adapts check.Info to Info.
type checkInfo struct {
	info    *check.Info
	strsize uint32
	types   map[types.Type]*program.Type
	vars    map[any]*Var
	aggs    map[*check.Agg]*AggInfo
}

func (a *checkInfo) TypeOf(e syntax.Expr) *program.Type {
	tv, ok := a.info.Types[e]
	if !ok || tv.Type == nil {
		return nil
	}
	return a.conv(tv.Type)
}

func (a *checkInfo) ConstOf(e syntax.Expr) (int64, bool) {
	tv, ok := a.info.Types[e]
	if !ok || tv.Value == nil || tv.Value.IsStr {
		return 0, false
	}
	return tv.Value.Int, true
}

func (a *checkInfo) StrConstOf(e syntax.Expr) (string, bool) {
	tv, ok := a.info.Types[e]
	if !ok || tv.Value == nil || !tv.Value.IsStr {
		return "", false
	}
	return tv.Value.Str, true
}

func (a *checkInfo) Expand(e syntax.Expr) syntax.Expr {
	if in, ok := a.info.Uses[e].(*check.Inline); ok {
		return in.Value
	}
	return nil
}

// InlineCall implements InlineInfo.
func (a *checkInfo) InlineCall(e *syntax.IndexExpr) (syntax.Expr, []*Var, bool) {
	in, ok := a.info.Uses[e.X].(*check.Inline)
	if !ok || len(in.Params) == 0 || len(in.Params) != len(e.Index) {
		return nil, nil, false
	}
	params := make([]*Var, len(in.Params))
	for i, p := range in.Params {
		if params[i] = a.varOf(p); params[i] == nil {
			return nil, nil, false
		}
	}
	return in.Value, params, true
}

func (a *checkInfo) TypeOfName(*syntax.TypeName) *program.Type { return nil }

func (a *checkInfo) VarOf(e syntax.Expr) *Var {
	obj, ok := a.info.Uses[e]
	if !ok {
		return nil
	}
	return a.varOf(obj)
}

// Declared returns the declared global and clause-local variables that
// are not associative arrays, in order of declaration.
func (a *checkInfo) Declared() []*Var {
	var vs []*Var
	for _, v := range a.info.Vars {
		if v.Declared && v.Keys == nil && (v.Kind == check.GlobalVar || v.Kind == check.LocalVar) {
			vs = append(vs, a.varOf(v))
		}
	}
	return vs
}

func (a *checkInfo) varOf(obj check.Object) *Var {
	if v, ok := a.vars[obj]; ok {
		return v
	}
	var v *Var
	switch o := obj.(type) {
	case *check.Var:
		v = &Var{Name: o.Name, ID: o.ID, Type: a.conv(o.Type)}
		assoc := o.Keys != nil
		switch {
		case o.Kind == check.GlobalVar && assoc:
			v.Kind = VarAssoc
		case o.Kind == check.GlobalVar:
			v.Kind = VarGlobal
		case o.Kind == check.ThreadVar && assoc:
			v.Kind = VarTAssoc
		case o.Kind == check.ThreadVar:
			v.Kind = VarThread
		case o.Kind == check.FlowVar:
			v.Kind = VarFlow
		case o.Kind == check.ParamVar:
			v.Kind = VarParam
		default:
			v.Kind = VarClause
		}
		for _, k := range o.Keys {
			v.Keys = append(v.Keys, a.conv(k))
		}
	case *check.Builtin:
		v = &Var{Name: o.Name, Kind: VarBuiltin, Type: a.conv(o.Type)}
	case *check.EnumConst:
		v = &Var{Name: o.Name, Kind: VarConst, Value: o.Value, Type: program.TypeInt}
	case *check.Symbol:
		v = &Var{Name: o.Name, Kind: VarSymbol, Value: int64(o.Addr), Module: o.Module, Type: a.conv(o.Type)}
	default:
		return nil
	}
	a.vars[obj] = v
	return v
}

func (a *checkInfo) AggOf(e *syntax.AggExpr) *AggInfo {
	ag, ok := a.info.Uses[e].(*check.Agg)
	if !ok {
		return nil
	}
	if ai, ok := a.aggs[ag]; ok {
		return ai
	}
	ai := &AggInfo{ID: ag.ID, Name: ag.Name, Func: ag.Func, Params: ag.Params}
	for _, k := range ag.Keys {
		ai.Keys = append(ai.Keys, a.conv(k))
	}
	a.aggs[ag] = ai
	return ai
}

// conv translates a checker type to codegen's layout view.
func (a *checkInfo) conv(t types.Type) *program.Type {
	if t == nil {
		return nil
	}
	if c, ok := a.types[t]; ok {
		return c
	}
	c := &program.Type{Name: t.String()}
	a.types[t] = c
	u := types.Underlying(t)
	switch u := u.(type) {
	case *types.Basic:
		switch u.K {
		case types.KindInt:
			c.Kind, c.Size, c.Signed, c.Char = program.TInt, uint32(u.Bytes), u.Signed, u.Char
		case types.KindVoid:
			c.Kind = program.TVoid
		default:
			// Floating-point values are carried as raw 64-bit patterns.
			c.Kind, c.Size, c.Float = program.TInt, uint32(u.Bytes), true
		}
	case *types.Enum:
		c.Kind, c.Size, c.Signed = program.TInt, uint32(u.Size()), true
		c.Enum = []program.EnumConst{}
		for _, v := range u.Values {
			c.Enum = append(c.Enum, program.EnumConst{Name: v.Name, Value: v.Value})
		}
	case *types.Pointer:
		c.Kind, c.Size, c.Elem = program.TPointer, 8, a.conv(u.Elem)
	case *types.Array:
		c.Kind, c.Size, c.Len, c.Elem = program.TArray, uint32(u.Size()), uint32(u.Len), a.conv(u.Elem)
	case *types.String:
		c.Kind, c.Size = program.TString, a.strsize
	case *types.Struct:
		c.Kind, c.Size, c.Union = program.TStruct, uint32(u.Size()), u.Union
		for _, fl := range u.Fields {
			nf := program.Field{Name: fl.Name, Type: a.conv(fl.Type), Offset: uint32(fl.Offset / 8)}
			if fl.Bits != 0 {
				// Bit-fields are loaded from the byte holding their first
				// bit.
				nf.BitSize = uint32(fl.Bits)
				nf.BitOff = uint32(fl.Offset % 8)
			}
			c.Fields = append(c.Fields, nf)
		}
	default:
		switch u.Kind() {
		case types.KindStack, types.KindSymaddr, types.KindUsymaddr:
			c.Kind, c.Size = program.TInt, 8
		case types.KindFunc:
			c.Kind, c.Size = program.TFunc, 8
		default:
			c.Kind, c.Size, c.Signed = program.TInt, 8, true
		}
	}
	return c
}

// XlateMember implements XlateInfo.
func (a *checkInfo) XlateMember(e *syntax.MemberExpr) (syntax.Expr, *Var, syntax.Expr, bool) {
	m := a.info.Members[e]
	if m == nil || m.Xlator == nil || m.Xlator.ParamVar == nil {
		return nil, nil, nil, false
	}
	xm := m.Xlator.Member[e.Name.Name]
	in := a.xlateInput(e.X)
	if xm == nil || in == nil {
		return nil, nil, nil, false
	}
	return xm.Value, a.varOf(m.Xlator.ParamVar), in, true
}

// XlateOf implements XlateInfo.
func (a *checkInfo) XlateOf(e syntax.Expr) (map[string]syntax.Expr, *Var, syntax.Expr, bool) {
	var tr *check.Translator
	var in syntax.Expr
	switch x := e.(type) {
	case *syntax.XlateExpr:
		tr, in = a.info.Xlates[x], x.X
	case *syntax.IndexExpr:
		tr, in = a.info.ArgXlators[x], x
	}
	if tr == nil || tr.ParamVar == nil {
		return nil, nil, nil, false
	}
	ms := map[string]syntax.Expr{}
	for name, m := range tr.Member {
		ms[name] = m.Value
	}
	return ms, a.varOf(tr.ParamVar), in, true
}

// xlateInput finds the expression a translation applies to, looking
// through parentheses, dereferences and inlines.
func (a *checkInfo) xlateInput(e syntax.Expr) syntax.Expr {
	switch x := a.info.Translation(e).(type) {
	case *syntax.XlateExpr:
		return x.X
	case *syntax.IndexExpr:
		if a.info.ArgXlators[x] != nil {
			return x
		}
	}
	return nil
}

// BuiltinXlate implements XlateInfo: the translator from the kernel's
// task to out (e.g. "psinfo_t") and its expression for member.
func (a *checkInfo) BuiltinXlate(out, member string) (syntax.Expr, *Var, bool) {
	for _, tr := range a.info.Translators {
		if tr.ParamVar == nil || types.TypeString(tr.Out) != out || tr.Member[member] == nil {
			continue
		}
		if p, ok := types.Underlying(tr.In).(*types.Pointer); !ok || !strings.HasSuffix(types.TypeString(p.Elem), "struct task_struct") {
			continue
		}
		return tr.Member[member].Value, a.varOf(tr.ParamVar), true
	}
	return nil, nil, false
}
