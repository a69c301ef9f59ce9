package check

import (
	"strconv"
	"strings"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// Clause flags for the ordering rules of actions (dtrace's
// DT_CLSFLAG_*).
const (
	clsDataRec = 1 << iota
	clsAgg
	clsSpeculate
	clsCommit
)

// actionOrder applies dtrace's rules on what may follow speculate() and
// commit() in one clause.
func (c *checker) actionOrder(pos syntax.Pos, k actKind) bool {
	f := &c.clsFlags
	fail := func(tag Tag, msg string) bool {
		c.errorf(pos, tag, "%s", msg)
		return false
	}
	switch k {
	case actCommit:
		if *f&(clsDataRec|clsAgg) != 0 {
			return fail(D_COMM_DREC, "commit( ) may not follow data-recording action(s)")
		}
		*f |= clsCommit
		return true
	case actDiscard:
		return true
	case actSpeculate:
		if *f&clsSpeculate != 0 {
			return fail(D_SPEC_SPEC, "speculate( ) may not follow speculate( )")
		}
		if *f&clsCommit != 0 {
			return fail(D_SPEC_COMM, "speculate( ) may not follow commit( )")
		}
		if *f&(clsDataRec|clsAgg) != 0 {
			return fail(D_SPEC_DREC, "speculate( ) may not follow data-recording action(s)")
		}
		*f |= clsSpeculate
		return true
	}
	if *f&clsSpeculate != 0 {
		if k == actDestruct {
			return fail(D_ACT_SPEC, "destructive actions may not follow speculate( )")
		}
		if k == actExit {
			return fail(D_EXIT_SPEC, "exit( ) may not follow speculate( )")
		}
	}
	if k == actDestruct {
		// Not data-recording, as in illumos (chill( ) may come before
		// speculate( ), raise( ) after commit( )).
		return true
	}
	if *f&clsCommit != 0 {
		return fail(D_DREC_COMM, "data-recording actions may not follow commit( )")
	}
	*f |= clsDataRec
	return true
}

// aggOrder applies the ordering rules to an aggregation.
func (c *checker) aggOrder(pos syntax.Pos) bool {
	if c.clause == nil {
		return true
	}
	if c.clsFlags&clsCommit != 0 {
		c.errorf(pos, D_AGG_COMM, "aggregating actions may not follow commit( )")
		return false
	}
	if c.clsFlags&clsSpeculate != 0 {
		c.errorf(pos, D_AGG_SPEC, "aggregating actions may not follow speculate( )")
		return false
	}
	c.clsFlags |= clsAgg
	return true
}

// program checks one program. As in dtrace, whose parser processes
// declarations, inlines, translators and pragmas as it reads them and
// checks clauses only once the whole program is parsed, the declarations
// come first and the clauses second.
func (c *checker) program(p *syntax.Program) {
	if p == nil {
		return
	}
	for _, d := range p.Decls {
		if len(c.errs) > 0 {
			return // dtrace stops at the first error
		}
		switch d := d.(type) {
		case *syntax.ProbeClause:
			// dtrace's lexer expands macros in probe descriptions and its
			// parser checks them as it reads them.
			for _, pd := range d.Descs {
				s, ok := c.expandDesc(pd)
				if !ok {
					break
				}
				if strings.Count(s, ":") > 3 {
					c.errorf(pd.Pos(), D_PDESC_INVAL, "invalid probe description \"%s\": Overspecified probe description", s)
					break
				}
				c.descs[d] = append(c.descs[d], s)
			}
			if len(c.errs) == 0 {
				c.parseTimeChecks(d)
			}
		case *syntax.Declaration:
			c.declaration(d, false)
		case *syntax.InlineDecl:
			c.inline(d)
		case *syntax.TranslatorDecl:
			c.translator(d)
		case *syntax.PragmaDecl:
			c.pragma(d)
		case *syntax.ProviderDecl:
			c.provider(d)
		}
		// Checks deferred outside clauses belong to code generated where it
		// is used (inlines, translators).
		c.deferred = nil
	}
	for _, d := range p.Decls {
		if len(c.errs) > 0 {
			return
		}
		if d, ok := d.(*syntax.ProbeClause); ok {
			c.probeClause(d)
		}
	}
}

// expandDesc substitutes macro variables in a probe description.
func (c *checker) expandDesc(pd *syntax.ProbeDesc) (string, bool) {
	s := pd.Text
	if !strings.Contains(s, "$") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			b.WriteByte(s[i])
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		name := s[i+1 : j]
		if n, err := strconv.Atoi(name); err == nil {
			switch {
			case n < len(c.conf.MacroArgs):
				if n < len(c.usedArgs) {
					c.usedArgs[n] = true
				}
				b.WriteString(c.conf.MacroArgs[n])
			case c.defaultArgs:
			default:
				c.errorf(pd.Pos(), D_MACRO_UNDEF, "macro argument $%s is not defined", name)
				return "", false
			}
		} else if v, ok := c.conf.Macros[name]; ok {
			b.WriteString(strconv.FormatInt(v, 10))
		} else if name == "target" {
			b.WriteString("0")
		} else {
			c.errorf(pd.Pos(), D_MACRO_UNDEF, "macro variable $%s is not defined", name)
			return "", false
		}
		i = j - 1
	}
	return b.String(), true
}

// probeClause checks a clause.
func (c *checker) probeClause(d *syntax.ProbeClause) {
	cl := &Clause{Index: len(c.info.Clauses), Decl: d, Pred: d.Pred, Body: d.Body}
	c.info.Clauses = append(c.info.Clauses, cl)
	cl.Probes = c.descs[d]
	c.clause = cl
	defer func() { c.clause = nil }()
	cl.DescAttr = c.clauseDescAttr(cl)
	if c.amin != nil && cl.DescAttr.Less(*c.amin) {
		c.errorf(c.last(d), D_ATTR_MIN, "attributes for clause (%s) are less than predefined minimum", cl.DescAttr)
		return
	}
	// dtrace checks the actions first and the predicate second, unless the
	// actions refer to something undefined: then it starts over with the
	// predicate first (a variable may be created by the predicate). What
	// the first attempt created stays. Code is generated for the predicate
	// first, so its deferred checks run first.
	nerr := len(c.errs)
	var predDeferred, bodyDeferred []func() bool
	body := func() {
		c.clsFlags = 0
		c.deferred = nil
		if d.Body != nil {
			c.stmts(d.Body.List)
		}
		bodyDeferred = c.deferred
	}
	pred := func() bool {
		if d.Pred == nil {
			return true
		}
		c.deferred = nil
		// The lexer reads past the closing slash of a predicate.
		c.predEnd = c.after(d.Pred)
		tv := c.expr(d.Pred)
		c.predEnd = syntax.NoPos
		predDeferred = c.deferred
		if tv.Type == nil {
			return false
		}
		if !isScalar(tv.Type) {
			c.errorf(c.last(d), D_PRED_SCALAR, "predicate result must be of scalar type")
			return false
		}
		return true
	}
	body()
	if len(c.errs) > nerr {
		if d.Pred == nil || (c.errs[nerr].Tag != D_IDENT_UNDEF && c.errs[nerr].Tag != D_VAR_UNDEF) {
			return
		}
		c.errs = c.errs[:nerr]
		if !pred() {
			return
		}
		body()
	} else if !pred() {
		return
	}
	if len(c.errs) > nerr {
		return
	}
	c.clsFlags = 0
	c.deferred = append(predDeferred, bodyDeferred...)
	c.runDeferred()
	c.stmtAttr(cl)
}

func (c *checker) stmts(list []syntax.Stmt) {
	for _, s := range list {
		if len(c.errs) > 0 {
			return
		}
		c.stmt(s)
	}
}

func (c *checker) stmt(s syntax.Stmt) {
	if _, ok := s.(*syntax.ExprStmt); ok {
		c.curStmt = s
		defer func() { c.curStmt = nil }()
	}
	switch s := s.(type) {
	case *syntax.ExprStmt:
		switch x := syntax.Unparen(s.X).(type) {
		case *syntax.CallExpr:
			c.call(x, true)
			return
		case *syntax.AggExpr:
			if _, ok := c.aggs[x.Name]; !ok && x.Keys == nil {
				c.errorf(x.Pos(), D_IDENT_UNDEF, "failed to resolve @%s: Unknown variable name", x.Name)
				return
			}
			c.defer1(-1, func() bool {
				c.errorf(c.last(s), D_AGG_NULL, "expression has null effect: @%s", x.Name)
				return false
			})
			return
		}
		if tv := c.expr(s.X); tv.Type != nil && c.dynamicName(s.X) != "" {
			// Found when dtrace generates the clause's code.
			c.defer1(-1, func() bool {
				c.errorf(c.after(s.X), D_CG_DYN, "expression cannot evaluate to result of dynamic type")
				return false
			})
		}
	case *syntax.BlockStmt:
		c.stmts(s.List)
	case *syntax.IfStmt:
		tv := c.expr(s.Cond)
		if tv.Type == nil {
			return
		}
		if c.flags[s.Cond].action {
			c.errorf(s.Cond.Pos(), D_OP_ACT, "action cannot be used in a conditional context")
			return
		}
		if !isScalar(tv.Type) && !types.IsStringLike(tv.Type) {
			c.errorf(s.Cond.Pos(), D_OP_SCALAR, "operator ?: expression must be of scalar type")
			return
		}
		if s.Then != nil {
			c.stmt(s.Then)
		}
		if s.Else != nil && len(c.errs) == 0 {
			c.stmt(s.Else)
		}
	case *syntax.DeclStmt:
		c.declaration(s.Decl, true)
	case *syntax.EmptyStmt:
	}
}

// idKindName names an identifier kind for redeclaration messages.
func idKindName(v *Var) string {
	if v.Keys != nil {
		return "array"
	}
	return "scalar"
}

// declaration checks a declaration at top level or in a clause body.
func (c *checker) declaration(d *syntax.Declaration, inClause bool) {
	ds := d.Specs
	if ds == nil {
		return
	}
	switch ds.Class {
	case syntax.Auto, syntax.Register, syntax.Static:
		c.errorf(c.last(d), D_DECL_BADCLASS, "specified storage class not appropriate in D")
		return
	}
	base := c.specType(ds)
	if base == nil {
		return
	}
	if len(d.Decls) == 0 {
		switch ds.Type.(type) {
		case *syntax.StructType, *syntax.EnumType:
			return
		}
		c.errorf(c.last(d), D_DECL_USELESS, "useless declaration")
		return
	}
	for _, dr := range d.Decls {
		if len(c.errs) > 0 {
			return
		}
		c.declarator(d, ds, base, dr)
	}
}

func (c *checker) declarator(d *syntax.Declaration, ds *syntax.DeclSpecs, base types.Type, dr *syntax.Declarator) {
	if dr.Name == nil {
		c.errorf(c.after(dr), D_DECL_USELESS, "useless declaration")
		return
	}
	name := dr.Name.Name
	if dr.Name.Scoped || dr.Name.Module != "" {
		c.errorf(c.after(dr), D_DECL_SCOPE, "D scoping operator may not be used in a declaration name (%s`%s)", dr.Name.Module, name)
		return
	}
	// An associative array: the outermost derivation has key types.
	var keys []types.Type
	dt := dr.Type
	if ad, ok := dt.(*syntax.ArrayDecl); ok && (ad.Keys != nil || ad.Variadic) {
		for i, k := range ad.Keys {
			kt := c.typeName(k)
			if kt == nil {
				return
			}
			if types.IsVoid(kt) {
				c.errorf(c.after(k), D_DECL_PROTO_TYPE, "array prototype may not use parameter of type void: (anonymous), parameter #%d", i+1)
				return
			}
			if k.Specs != nil && k.Specs.Class != syntax.NoClass {
				c.errorf(c.after(k), D_DECL_PARMCLASS, "inappropriate storage class for function or associative array parameter")
				return
			}
			keys = append(keys, kt)
		}
		if ad.Variadic {
			c.errorf(c.after(ad), D_DECL_PROTO_VARARGS, "array prototype may not use a variable-length argument list")
			return
		}
		dt = ad.Elem
	}
	c.openArrays = ds.Class == syntax.Extern
	t := c.derive(base, dt, name)
	c.openArrays = false
	if t == nil {
		return
	}
	if ds.Class == syntax.Typedef {
		if old := c.info.Scope.Lookup(name); old != nil || c.dScope.Lookup(name) != nil || c.cScope.Lookup(name) != nil {
			c.errorf(c.after(dr), D_DECL_IDRED, "typedef redeclared: %s", name)
			return
		}
		c.info.Scope.Insert(name, &types.Typedef{Name: name, Module: "D", Type: t})
		return
	}
	if types.Underlying(t).Kind() == types.KindFunc {
		// A function prototype declares nothing D can call.
		return
	}
	if types.IsVoid(t) {
		c.errorf(c.after(dr), D_DECL_VOIDOBJ, "cannot have void object: %s", name)
		return
	}
	if c.incomplete(t) && ds.Class != syntax.Extern {
		// An extern only names a kernel symbol: its type may be
		// incomplete.
		c.errorf(c.after(dr), D_DECL_INCOMPLETE, "incomplete struct/union/enum %s: %s", types.TypeString(t), name)
		return
	}
	if _, ok := c.builtins[name]; (ok || c.funcs[name] != nil) && ds.Class != syntax.Self && ds.Class != syntax.This {
		c.errorf(c.after(dr), D_DECL_IDRED, "built-in identifier redeclared: %s", name)
		return
	}
	if ds.Class == syntax.Extern {
		// An extern types the kernel symbol of its name; in a program
		// (not the D library) it also declares the name as an
		// identifier.
		c.symTypes[name] = t
		if c.progIndex >= c.conf.LibraryPrograms {
			c.externs[name] = t
		}
		return
	}
	tab, kind := c.globals, GlobalVar
	switch ds.Class {
	case syntax.Self:
		tab, kind = c.threads, ThreadVar
	case syntax.This:
		tab, kind = c.locals, LocalVar
		if keys != nil {
			c.errorf(c.after(dr), D_DECL_LOCASSC, "associative arrays may not be declared as local variables: %s", name)
			return
		}
	}
	if old, ok := tab[name]; ok {
		if old.Type != nil && (!types.Identical(old.Type, t) || (old.Keys == nil) != (keys == nil)) {
			c.errorf(c.after(dr), D_DECL_IDRED, "identifier redeclared: %s\n\t current: %s %s\n\tprevious: %s %s",
				name, kindWord(keys), types.TypeString(t), idKindName(old), types.TypeString(old.Type))
			return
		}
		if keys != nil && len(keys) != len(old.Keys) {
			c.errorf(c.after(dr), D_DECL_IDRED, "identifier redeclared: %s\n\t current: %s of %s, tuple length %d\n\tprevious: %s of %s, tuple length %d",
				name, "array", types.TypeString(t), len(keys), "array", types.TypeString(old.Type), len(old.Keys))
			return
		}
		for i := range keys {
			if !types.Identical(keys[i], old.Keys[i]) {
				c.errorf(c.after(dr), D_DECL_IDRED, "identifier redeclared: %s\n\t current: %s, key #%d of type %s\n\tprevious: %s, key #%d of type %s",
					name, "array", i+1, types.TypeString(keys[i]), "array", i+1, types.TypeString(old.Keys[i]))
				return
			}
		}
		if old.Type == nil {
			old.Type, old.Size = t, t.Size()
		}
		return
	}
	if kind == GlobalVar {
		if _, ok := c.inlines[name]; ok {
			c.errorf(c.after(dr), D_DECL_IDRED, "identifier redeclared: %s", name)
			return
		}
	}
	v := c.newVar(name, kind, t, keys, dr.Pos())
	v.Declared = true
	tab[name] = v
	c.info.Defs[dr] = v
}

func kindWord(keys []types.Type) string {
	if keys != nil {
		return "array"
	}
	return "scalar"
}

// inline checks `inline T name = expr;`.
func (c *checker) inline(d *syntax.InlineDecl) {
	if d.Specs != nil && d.Specs.Class != syntax.NoClass {
		c.errorf(c.last(d), D_DECL_BADCLASS, "specified storage class not appropriate for inline declaration")
		return
	}
	if d.Decl == nil || d.Decl.Name == nil {
		c.errorf(c.last(d), D_DECL_USELESS, "inline declaration requires a name")
		return
	}
	name := d.Decl.Name.Name
	base := c.specType(d.Specs)
	if base == nil {
		return
	}
	dt := d.Decl.Type
	var params []*Var
	if ad, ok := dt.(*syntax.ArrayDecl); ok && ad.Keys != nil {
		c.params = map[string]*Var{}
		defer func() { c.params = nil }()
		for i, k := range ad.Keys {
			kt := c.typeName(k)
			if kt == nil {
				return
			}
			if k.Decl == nil || k.Decl.Name == nil {
				c.errorf(c.after(k), D_DECL_PROTO_NAME, "parameter declaration requires a name: parameter #%d", i+1)
				return
			}
			p := &Var{Name: k.Decl.Name.Name, Kind: ParamVar, ID: i, Type: kt, Size: kt.Size(), Pos: k.Pos()}
			params = append(params, p)
			c.params[p.Name] = p
		}
		dt = ad.Elem
	}
	t := c.derive(base, dt, name)
	if t == nil {
		return
	}
	if types.IsVoid(t) {
		c.errorf(c.last(d), D_DECL_VOIDOBJ, "cannot declare void inline: %s", name)
		return
	}
	prev := ""
	switch {
	case c.inlines[name] != nil:
		prev = "scalar inline"
	case c.globals[name] != nil:
		prev = "scalar "
	case c.builtins[name] != nil:
		prev = "scalar "
		if c.builtins[name].Array {
			prev = "array "
		}
	case c.funcs[name] != nil:
		prev = funcKindName(c.funcs[name].fn.Kind) + " "
	}
	if prev != "" {
		c.errorf(c.last(d), D_DECL_IDRED, "identifier redefined: %s\n\t current: inline definition\n\tprevious: %s", name, prev)
		return
	}
	tv := c.expr(d.Value)
	if tv.Type == nil {
		return
	}
	if !c.argCompat(t, d.Value, tv) {
		c.errorf(c.last(d), D_OP_INCOMPAT, "inline %s definition uses incompatible types: \"%s\" = \"%s\"", name, types.TypeString(t), types.TypeString(tv.Type))
		return
	}
	in := &Inline{Name: name, Type: t, Value: d.Value, Params: params, Pos: d.Pos()}
	if tv.Value != nil && isInt(t) && !tv.Value.IsStr {
		c.info.Types[d.Value] = TypeAndValue{Type: tv.Type, Value: intConst(castConst(tv.Value.Int, tv.Type, t))}
	}
	c.inlines[name] = in
	c.info.Defs[d.Decl] = in
}

// provider records a provider definition. dtrace names USDT probes with
// "__" in the definition as "-" at run time (foo__bar is foo-bar).
func (c *checker) provider(d *syntax.ProviderDecl) {
	if d.Name == nil {
		return
	}
	p := &Provider{Name: d.Name.Name, Decl: d}
	params := func(ps []*syntax.Param) ([]types.Type, []string, bool) {
		var ts []types.Type
		var names []string
		for _, prm := range ps {
			t := c.specType(prm.Specs)
			if t == nil {
				return nil, nil, false
			}
			name := ""
			if prm.Decl != nil {
				t = c.derive(t, prm.Decl.Type, "")
				if t == nil {
					return nil, nil, false
				}
				if prm.Decl.Name != nil {
					name = prm.Decl.Name.Name
				}
			}
			if types.IsVoid(t) && len(ps) == 1 {
				break
			}
			ts = append(ts, t)
			names = append(names, name)
		}
		return ts, names, true
	}
	for _, pr := range d.Probes {
		if pr.Name == nil {
			continue
		}
		args, names, ok := params(pr.Params)
		if !ok {
			return
		}
		probe := &ProviderProbe{Name: strings.ReplaceAll(pr.Name.Name, "__", "-"), Args: args, XArgs: args}
		for i := range args {
			probe.XMap = append(probe.XMap, i)
		}
		if pr.XArgs != nil {
			xargs, xnames, ok := params(pr.XArgs)
			if !ok {
				return
			}
			probe.XArgs, probe.XMap = xargs, nil
			for i, xn := range xnames {
				m := i
				for j, n := range names {
					if xn != "" && n == xn {
						m = j
					}
				}
				probe.XMap = append(probe.XMap, m)
			}
		}
		p.Probes = append(p.Probes, probe)
	}
	c.info.Providers = append(c.info.Providers, p)
}

// translator checks a translator declaration.
func (c *checker) translator(d *syntax.TranslatorDecl) {
	out := c.typeName(d.Out)
	if out == nil {
		return
	}
	in := c.typeName(d.In)
	if in == nil {
		return
	}
	s, ok := types.Underlying(out).(*types.Struct)
	if !ok {
		c.errorf(c.last(d), D_XLATE_SOU, "translator output type must be a struct or union")
		return
	}
	if !s.Complete {
		c.errorf(c.last(d), D_XLATE_SOU, "incomplete struct/union/enum %s", types.TypeString(out))
		return
	}
	for _, tr := range c.info.Translators {
		if types.Identical(tr.Out, out) && types.Identical(tr.In, in) {
			c.errorf(c.last(d), D_XLATE_REDECL, "translator from %s to %s has already been declared", types.TypeString(in), types.TypeString(out))
			return
		}
	}
	tr := &Translator{Out: out, In: in, Decl: d, Member: map[string]*syntax.XlateMember{}, ID: len(c.info.Translators)}
	if d.Param != nil {
		tr.Param = d.Param.Name
	}
	// The input parameter is visible as a variable while checking members.
	tr.ParamVar = &Var{Name: tr.Param, Kind: ParamVar, Type: in, Size: in.Size(), Pos: d.Pos()}
	c.params = map[string]*Var{tr.Param: tr.ParamVar}
	defer func() { c.params = nil }()
	for _, m := range d.Members {
		f, _, ok := s.Field(m.Name.Name)
		if !ok {
			c.errorf(c.after(m), D_XLATE_MEMB, "translator member %s is not a member of %s", m.Name.Name, types.TypeString(out))
			return
		}
		tv := c.expr(m.Value)
		if tv.Type == nil {
			return
		}
		if !c.argCompat(f.Type, m.Value, tv) {
			c.errorf(c.after(m), D_XLATE_INCOMPAT, "translator member %s definition uses incompatible types: \"%s\" = \"%s\"", m.Name.Name, types.TypeString(f.Type), types.TypeString(tv.Type))
			return
		}
		tr.Member[m.Name.Name] = m
	}
	c.info.Translators = append(c.info.Translators, tr)
}

// stabilities and classes are the words of dtrace's attribute triples.
var (
	stabilities = []string{"Internal", "Private", "Obsolete", "External", "Unstable", "Evolving", "Stable", "Standard"}
	depClasses  = []string{"Unknown", "CPU", "Platform", "Group", "ISA", "Common"}
)

func oneOf(w string, list []string) bool {
	for _, s := range list {
		if strings.EqualFold(s, w) {
			return true
		}
	}
	return false
}

// pragmaAttributes handles `#pragma D attributes name/data/class ident`.
func (c *checker) pragmaAttributes(d *syntax.PragmaDecl, w []string) {
	if tag, msg := attributesForm(w); msg != "" {
		c.errorf(d.Pos(), tag, "%s", msg)
		return
	}
	name := w[1]
	if a, ok := ParseAttr(w[0]); ok {
		c.attrOf[name] = a
	}
	if name == "provider" || c.globals[name] != nil || c.inlines[name] != nil || c.builtins[name] != nil {
		return
	}
	c.pendingPragmas = append(c.pendingPragmas, pendingPragma{name: name, pos: d.Pos()})
}

// attributesForm checks the words after `#pragma D attributes`: an
// attribute triple and an identifier. The message is "" if they are well
// formed.
func attributesForm(w []string) (Tag, string) {
	if len(w) < 2 {
		return D_PRAGMA_MALFORM, "malformed #pragma attributes <attributes> <ident>"
	}
	parts := strings.Split(w[0], "/")
	if len(parts) != 3 || !oneOf(parts[0], stabilities) || !oneOf(parts[1], stabilities) || !oneOf(parts[2], depClasses) {
		return D_PRAGMA_INVAL, "invalid attributes specified by #pragma attributes"
	}
	return D_UNKNOWN, ""
}

// Directive checks a control line when it is scanned, as dtrace acts on
// its pragmas while it reads the program, before the parser reports
// errors in the text after them: set it as syntax.Config.Directive. It
// checks what needs no declarations (the form of #pragma D attributes);
// Check does the rest.
func Directive(d *syntax.PragmaDecl) (tag, msg string) {
	w := d.Words
	if d.Directive != "pragma" || len(w) < 2 || w[0] != "D" || w[1] != "attributes" {
		return "", ""
	}
	if t, m := attributesForm(w[2:]); m != "" {
		return t.String(), m
	}
	return "", ""
}

// pendingPragma is an attributes pragma naming an identifier not yet
// declared.
type pendingPragma struct {
	name string
	pos  syntax.Pos
}

// pragmaText rebuilds the text of #pragma error as dtrace prints it:
// each token (strings without their quotes) followed by a space.
func pragmaText(words []string) string {
	var b strings.Builder
	for _, w := range words {
		if len(w) >= 2 && w[0] == '"' && w[len(w)-1] == '"' {
			w = w[1 : len(w)-1]
		}
		b.WriteString(w)
		b.WriteByte(' ')
	}
	return b.String()
}

// pragma handles #pragma lines.
func (c *checker) pragma(d *syntax.PragmaDecl) {
	w := d.Words
	if len(w) == 0 {
		return
	}
	switch w[0] {
	case "D":
		if len(w) < 2 {
			c.errorf(d.Pos(), D_PRAGMA_MALFORM, "malformed #pragma D <directive>")
			return
		}
		switch w[1] {
		case "option":
			if len(w) < 3 {
				c.errorf(d.Pos(), D_PRAGMA_MALFORM, "malformed #pragma %s <option>=<val>", "option")
				return
			}
			if len(w) > 3 {
				c.errorf(d.Pos(), D_PRAGMA_MALFORM, "superfluous arguments specified for #pragma %s", "option")
				return
			}
			name, val, _ := strings.Cut(w[2], "=")
			if c.conf.Pragma != nil {
				if err := c.conf.Pragma(name, val); err != nil {
					if val != "" {
						c.errorf(d.Pos(), D_PRAGMA_OPTSET, "failed to set option '%s' to '%s': %s", name, val, err.Error())
					} else {
						c.errorf(d.Pos(), D_PRAGMA_OPTSET, "failed to set option '%s': %s", name, err.Error())
					}
					return
				}
			}
			switch name {
			case "defaultargs":
				c.defaultArgs = true
			case "argref":
				c.argRef = true
			}
			if name == "amin" {
				if a, ok := ParseAttr(val); ok {
					c.amin = &a
				}
			}
			if name == "version" {
				if v, ok := ParseVersion(val); ok {
					c.reduceVersion(v)
				}
			}
			if name == "scratchsize" {
				if n, err := strconv.ParseInt(val, 0, 64); err == nil && n > 0 {
					c.scratchSize = n
				}
			}
			if name == "strsize" {
				if n, err := strconv.ParseInt(val, 0, 64); err == nil && n > 0 {
					c.info.StrSize = n
					c.strType.Bytes = n
				}
			}
		case "attributes":
			c.pragmaAttributes(d, w[2:])
		case "depends_on":
			if len(w) >= 3 && w[2] == "library" && c.progIndex >= c.conf.LibraryPrograms {
				c.errorf(d.Pos(), D_PRAGMA_DEPEND, "main program may not explicitly depend on a library")
			}
		case "binding", "ident", "line", "error":
			if w[1] == "error" {
				c.errorf(d.Pos(), D_PRAGERR, "#%s: %s", "error", pragmaText(w[2:]))
			}
		default:
			c.errorf(d.Pos(), D_PRAGMA_INVAL, "invalid D pragma: %s", w[1])
		}
	case "error":
		c.errorf(d.Pos(), D_PRAGERR, "#%s: %s", "error", pragmaText(w[1:]))
	case "ident", "line", "once":
	default:
		// Unknown non-D pragmas are ignored, as in C.
	}
}
