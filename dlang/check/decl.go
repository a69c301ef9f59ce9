package check

import (
	"strings"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// lookupType finds a named type by its C name, in module if it is not "":
// the program's declarations, the C intrinsics, D's typedefs, the kernel,
// and the stand-ins for kernel typedefs.
func (c *checker) lookupType(module, name string) types.Type {
	switch module {
	case "":
		for _, s := range []*types.Scope{c.info.Scope, c.cScope, c.dScope} {
			if t := s.Lookup(name); t != nil {
				return t
			}
		}
	case "C":
		return c.cScope.Lookup(name)
	case "D":
		if t := c.info.Scope.Lookup(name); t != nil {
			return t
		}
		return c.dScope.Lookup(name)
	}
	if c.conf.Kernel != nil {
		if t := c.conf.Kernel.LookupType(module, name); t != nil {
			return t
		}
	}
	if module == "" || module == "vmlinux" {
		return c.fallback.Lookup(name)
	}
	return nil
}

// kernelType resolves a type that dtrace takes from the kernel, such as
// "struct task_struct"; without kernel types it is an opaque placeholder.
func (c *checker) kernelType(name string) types.Type {
	if t := c.lookupType("vmlinux", name); t != nil {
		return t
	}
	t, ok := c.opaque[name]
	if !ok {
		t = types.NewOpaque(name)
		c.opaque[name] = t
	}
	return t
}

// Declaration attribute bits, as dtrace accumulates them.
const (
	daSigned = 1 << iota
	daUnsigned
	daShort
	daLong
	daLongLong
)

// specType returns the type named by a declaration's specifiers. It returns
// nil after reporting an error.
func (c *checker) specType(ds *syntax.DeclSpecs) types.Type {
	if ds == nil || ds.Type == nil {
		return types.Int
	}
	if !c.specAttrs(ds) {
		return nil
	}
	var t types.Type
	switch ts := ds.Type.(type) {
	case *syntax.BasicType:
		t = c.basicType(ts)
	case *syntax.NamedType:
		t = c.lookupType(ts.Module, ts.Name)
		if t == nil && ts.Module == "" && c.conf.Kernel == nil {
			// Without kernel types an unknown name may still be a kernel
			// typedef (a builtin's prototype names them).
			t = nil
		}
		if t == nil {
			name := ts.Name
			if ts.Module != "" {
				name = ts.Module + "`" + ts.Name
			}
			c.errorf(c.after(ts), D_UNKNOWN, "failed to resolve type %s: Unknown type name", name)
			return nil
		}
	case *syntax.StructType:
		t = c.structType(ts)
	case *syntax.EnumType:
		t = c.enumType(ts)
	}
	if t == nil {
		return nil
	}
	if q := types.Qual(ds.Quals); q != 0 {
		t = &types.Qualified{Quals: q, Type: t}
	}
	return t
}

// specAttrs reports basic-type keywords written with a struct, union,
// enum or type name (`unsigned struct s`, `long string`): only integers
// may be signed or unsigned, only integers and floating-point types long.
// It returns false after reporting an error.
func (c *checker) specAttrs(ds *syntax.DeclSpecs) bool {
	sign, long := false, false
	for _, w := range ds.Attrs {
		switch w {
		case "signed", "unsigned":
			sign = true
		case "long":
			long = true
		}
	}
	if !sign && !long {
		return true
	}
	pos := c.specAttrPos(ds.Type)
	switch {
	case sign:
		c.errorf(pos, D_DECL_SIGNINT, "invalid type declaration: signed and unsigned may only be used with integer type")
	case long:
		c.errorf(pos, D_DECL_LONGINT, "invalid type declaration: long and long long may only be used with integer or floating-point type")
	}
	return false
}

// specAttrPos returns where dtrace reports specAttrs' errors: when it
// learns the kind of type, at the token after a type name or struct tag,
// or at the `{` opening a definition.
func (c *checker) specAttrPos(ts syntax.TypeSpec) syntax.Pos {
	defined := false
	switch t := ts.(type) {
	case *syntax.StructType:
		defined = t.Defined
	case *syntax.EnumType:
		defined = t.Defined
	}
	if !defined || c.conf.Source == nil || c.fset == nil {
		return c.after(ts)
	}
	f := c.fset.File(ts.Pos())
	if f == nil {
		return ts.Pos()
	}
	src := c.source(f.Name())
	off := f.Offset(ts.Pos())
	if src == nil || off < 0 || off > len(src) {
		return ts.Pos()
	}
	if i := indexFrom(src, off, "{"); i >= 0 {
		return f.Pos(i)
	}
	return ts.Pos()
}

func (c *checker) basicType(bt *syntax.BasicType) types.Type {
	attr := 0
	name := ""
	kind := types.KindInvalid
	check := func() bool {
		if kind == types.KindInvalid {
			return true
		}
		switch {
		case name == "char" && attr&(daShort|daLong|daLongLong) != 0:
			c.errorf(c.after(bt), D_DECL_CHARATTR, "invalid type declaration: short and long may not be used with char type")
		case name == "void" && attr != 0:
			c.errorf(c.after(bt), D_DECL_VOIDATTR, "invalid type declaration: attributes may not be used with void type")
		case kind != types.KindInt && attr&(daSigned|daUnsigned) != 0:
			c.errorf(c.after(bt), D_DECL_SIGNINT, "invalid type declaration: signed and unsigned may only be used with integer type")
		case kind != types.KindInt && kind != types.KindFloat && attr&(daLong|daLongLong) != 0:
			c.errorf(c.after(bt), D_DECL_LONGINT, "invalid type declaration: long and long long may only be used with integer or floating-point type")
		default:
			return true
		}
		return false
	}
	for _, w := range bt.Words {
		switch w {
		case "signed":
			attr |= daSigned
		case "unsigned":
			attr |= daUnsigned
		case "short":
			attr |= daShort
		case "long":
			if attr&daLong != 0 {
				attr = attr&^daLong | daLongLong
			} else {
				attr |= daLong
			}
		default:
			if name != "" {
				c.errorf(c.after(bt), D_DECL_COMBO, "invalid type combination")
				return nil
			}
			name = w
			switch w {
			case "float", "double":
				kind = types.KindFloat
			case "void":
				kind = types.KindVoid
			default:
				kind = types.KindInt
			}
		}
		if !check() {
			return nil
		}
	}
	var b strings.Builder
	if attr&daSigned != 0 {
		b.WriteString("signed ")
	}
	if attr&daUnsigned != 0 {
		b.WriteString("unsigned ")
	}
	if attr&daShort != 0 {
		b.WriteString("short ")
	}
	if attr&daLong != 0 {
		b.WriteString("long ")
	}
	if attr&daLongLong != 0 {
		b.WriteString("long long ")
	}
	if attr == 0 && name == "" {
		b.WriteString("int")
	}
	if name != "" && (kind != types.KindInt || attr&(daShort|daLong|daLongLong) == 0) {
		b.WriteString(name)
	}
	full := b.String()
	if t := c.cScope.Lookup(strings.TrimSpace(full)); t != nil {
		return t
	}
	c.errorf(c.after(bt), D_UNKNOWN, "failed to resolve type %s: Unknown type name", full)
	return nil
}

// structType resolves `struct tag`, or defines a struct or union.
func (c *checker) structType(st *syntax.StructType) types.Type {
	kw := "struct "
	if st.Union {
		kw = "union "
	}
	key := kw + st.Tag
	if !st.Defined {
		if t := c.lookupType(st.Module, key); t != nil {
			return t
		}
		if st.Module != "" && st.Module != "D" && st.Module != "C" {
			if c.conf.Kernel == nil {
				return c.kernelType(key)
			}
			c.errorf(c.after(st), D_UNKNOWN, "failed to resolve type %s`%s: Unknown type name", st.Module, key)
			return nil
		}
		s := &types.Struct{Union: st.Union, Tag: st.Tag, Module: "D", Forward: true}
		c.info.Scope.Insert(key, s)
		return s
	}
	s, ok := definedTag(c, st, st.Tag, key, func(s *types.Struct) bool { return s.Complete },
		func() *types.Struct { return &types.Struct{Union: st.Union, Tag: st.Tag, Module: "D"} })
	if !ok {
		return s
	}
	s.Forward = false
	for _, f := range st.Members {
		base := c.specType(f.Specs)
		if base == nil {
			return s
		}
		if len(f.Decls) == 0 {
			// An anonymous struct or union member (the parser allows no
			// other member without a declarator).
			if !s.AddField("", base, 0) {
				c.errorf(c.after(f), D_UNKNOWN, "failed to define anonymous member: Duplicate member or variable name")
				return s
			}
			continue
		}
		for _, d := range f.Decls {
			name := ""
			if d.Name != nil {
				name = d.Name.Name
			}
			mt := c.derive(base, d.Type, name)
			if mt == nil {
				return s
			}
			if types.IsVoid(mt) || types.Underlying(mt).Kind() == types.KindFunc {
				c.errorf(c.after(d), D_DECL_VOIDOBJ, "cannot have void member: %s", name)
				return s
			}
			if c.incomplete(mt) {
				c.errorf(c.after(d), D_DECL_INCOMPLETE, "incomplete struct/union/enum %s: %s", types.TypeString(mt), name)
				return s
			}
			bits := 0
			if d.BitField != nil {
				tv := c.expr(d.BitField)
				if tv.Type == nil {
					return s
				}
				if tv.Value == nil || tv.Value.IsStr || !isInt(tv.Type) || tv.Value.Int <= 0 {
					c.errorf(c.after(d.BitField), D_DECL_BFCONST, "positive integral constant expression expected as bit-field size")
					return s
				}
				b, ok := types.Underlying(mt).(*types.Basic)
				if !ok || b.K != types.KindInt {
					if name == "" {
						name = "(anon)"
					}
					c.errorf(c.after(d), D_DECL_BFTYPE, "invalid type for bit-field: %s", name)
					return s
				}
				if tv.Value.Int > b.Bytes*8 {
					c.errorf(c.after(d), D_DECL_BFSIZE, "bit-field too big for type: %s", name)
					return s
				}
				bits = int(tv.Value.Int)
				mt = types.BitField(b, bits)
			}
			if !s.AddField(name, mt, bits) {
				c.errorf(c.after(d), D_UNKNOWN, "failed to define member '%s': Duplicate member or variable name", name)
				return s
			}
		}
	}
	s.Complete = true
	return s
}

// incomplete reports whether t is a struct, union or enum without a
// definition.
func (c *checker) incomplete(t types.Type) bool {
	switch u := types.Underlying(t).(type) {
	case *types.Struct:
		return !u.Complete
	case *types.Enum:
		return !u.Complete
	}
	return false
}

// definedTag returns the type that the definition n of a struct, union
// or enum fills in: the earlier declaration of its tag (key in the
// scope), or a new type made by mk and declared if tagged. A complete
// earlier one is a redeclaration: reported, and returned with false.
func definedTag[T interface {
	*types.Struct | *types.Enum
	types.Type
}](c *checker, n syntax.Node, tag, key string, complete func(T) bool, mk func() T) (T, bool) {
	if tag != "" {
		if old, ok := c.info.Scope.Lookup(key).(T); ok {
			if complete(old) {
				c.errorf(c.after(n), D_DECL_TYPERED, "type redeclared: %s", key)
				return old, false
			}
			return old, true
		}
	}
	t := mk()
	if tag != "" {
		c.info.Scope.Insert(key, t)
	}
	return t, true
}

// enumType resolves `enum tag` or defines an enumeration; enumerators
// become global constants.
func (c *checker) enumType(et *syntax.EnumType) types.Type {
	key := "enum " + et.Tag
	if !et.Defined {
		if t := c.lookupType(et.Module, key); t != nil {
			return t
		}
		if et.Module != "" && et.Module != "D" && c.conf.Kernel == nil {
			return c.kernelType(key)
		}
		e := &types.Enum{Tag: et.Tag, Module: "D"}
		c.info.Scope.Insert(key, e)
		return e
	}
	e, ok := definedTag(c, et, et.Tag, key, func(e *types.Enum) bool { return e.Complete },
		func() *types.Enum { return &types.Enum{Tag: et.Tag, Module: "D"} })
	if !ok {
		return e
	}
	next := int64(0)
	for _, v := range et.Values {
		name := v.Name.Name
		if v.Name.Scoped || v.Name.Module != "" {
			c.errorf(c.after(v), D_DECL_SCOPE, "D scoping operator may not be used in an enumerator name (%s)", name)
			return e
		}
		if v.Value != nil {
			tv := c.expr(v.Value)
			if tv.Type == nil {
				return e
			}
			if tv.Value == nil || tv.Value.IsStr || !isInt(tv.Type) {
				c.errorf(c.after(v.Value), D_DECL_ENCONST, "enumerator '%s' must be assigned to an integral constant expression", name)
				return e
			}
			next = tv.Value.Int
			if !types.IsSigned(tv.Type) && tv.Type.Size() == 8 && next < 0 {
				next = 1 << 62 // any value above INT_MAX
			}
		}
		if next > 0x7fffffff || next < -0x80000000 {
			c.errorf(c.after(v), D_DECL_ENOFLOW, "enumerator '%s' value overflows INT_MAX (%d)", name, 0x7fffffff)
			return e
		}
		if _, dup := e.Lookup(name); dup {
			c.errorf(c.after(v), D_UNKNOWN, "failed to define enumerator '%s': Duplicate member or variable name", name)
			return e
		}
		if _, dup := c.enumConsts[name]; dup {
			c.errorf(c.after(v), D_DECL_IDRED, "identifier redeclared: %s", name)
			return e
		}
		if _, dup := e.Lookup(name); dup {
			c.errorf(c.after(v), D_UNKNOWN, "failed to define enumerator '%s': Duplicate member or variable name", name)
			return e
		}
		e.Values = append(e.Values, types.Enumerator{Name: name, Value: next})
		c.enumConsts[name] = &EnumConst{Name: name, Value: next, Enum: e}
		next++
	}
	e.Complete = true
	return e
}

// derive applies a declarator's derivations to base. name is used in
// messages. It returns nil after reporting an error.
func (c *checker) derive(base types.Type, dt syntax.DeclType, name string) types.Type {
	switch d := dt.(type) {
	case nil:
		return base
	case *syntax.PointerDecl:
		// `*` applies to what the rest of the declarator derives.
		elem := c.derive(base, d.Elem, name)
		if elem == nil {
			return nil
		}
		var t types.Type = types.NewPointer(elem)
		if d.Quals != 0 {
			t = &types.Qualified{Quals: types.Qual(d.Quals), Type: t}
		}
		return t
	case *syntax.ArrayDecl:
		if d.Keys != nil || d.Variadic {
			c.errorf(c.after(d), D_DECL_DYNOBJ, "cannot declare array of associative arrays")
			return nil
		}
		elem := c.derive(base, d.Elem, name)
		if elem == nil {
			return nil
		}
		if d.Len == nil && c.openArrays {
			return &types.Array{Elem: elem}
		}
		if d.Len == nil {
			c.errorf(c.after(d), D_DECL_ARRNULL, "array declaration requires array dimension or tuple signature: %s", name)
			return nil
		}
		n, ok := c.arrayLen(d.Len)
		if !ok {
			return nil
		}
		if types.IsVoid(elem) {
			c.errorf(c.after(d), D_DECL_VOIDOBJ, "cannot declare array of void")
			return nil
		}
		return &types.Array{Elem: elem, Len: n}
	case *syntax.FuncDecl:
		res := c.derive(base, d.Elem, name)
		if res == nil {
			return nil
		}
		f := &types.Func{Result: res, Variadic: d.Variadic}
		for i, p := range d.Params {
			if p.Specs != nil && p.Specs.Class != syntax.NoClass {
				c.errorf(c.after(p), D_DECL_PARMCLASS, "inappropriate storage class for function or associative array parameter")
				return nil
			}
			if p.Decl != nil {
				if ad, ok := p.Decl.Type.(*syntax.ArrayDecl); ok && ad.Keys != nil {
					pname := "(anonymous)"
					if p.Decl.Name != nil {
						pname = p.Decl.Name.Name
					}
					c.errorf(c.after(p), D_DECL_PROTO_TYPE, "function prototype may not use parameter of type dynamic variable: %s, parameter #%d", pname, i+1)
					return nil
				}
			}
			pt := c.specType(p.Specs)
			if pt == nil {
				return nil
			}
			var pd syntax.DeclType
			if p.Decl != nil {
				pd = p.Decl.Type
			}
			pt = c.derive(pt, pd, name)
			if pt == nil {
				return nil
			}
			if types.IsVoid(pt) && pd == nil {
				if p.Decl != nil && p.Decl.Name != nil {
					c.errorf(c.after(p), D_DECL_PROTO_NAME, "void parameter may not have a name: %s", p.Decl.Name.Name)
					return nil
				}
				if len(d.Params) != 1 || i != 0 {
					c.errorf(c.after(p), D_DECL_PROTO_VOID, "void must be sole parameter")
					return nil
				}
				continue
			}
			f.Params = append(f.Params, pt)
		}
		return f
	}
	return base
}

// arrayLen evaluates an array dimension.
func (c *checker) arrayLen(e syntax.Expr) (int64, bool) {
	tv := c.expr(e)
	if tv.Type == nil {
		return 0, false
	}
	if tv.Value == nil || tv.Value.IsStr || !isInt(tv.Type) || tv.Value.Int <= 0 {
		if tv.Value != nil && !tv.Value.IsStr && isInt(tv.Type) && tv.Value.Int < 0 && !types.IsSigned(tv.Type) {
			c.errorf(c.after(e), D_DECL_ARRBIG, "array dimension too big")
			return 0, false
		}
		c.errorf(c.after(e), D_DECL_ARRSUB, "positive integral constant expression or tuple signature expected as array declaration subscript")
		return 0, false
	}
	if tv.Value.Int > 0x7fffffff {
		c.errorf(c.after(e), D_DECL_ARRBIG, "array dimension too big")
		return 0, false
	}
	return tv.Value.Int, true
}

// typeName resolves a type written in an expression.
func (c *checker) typeName(tn *syntax.TypeName) types.Type {
	if tn == nil {
		return nil
	}
	t := c.specType(tn.Specs)
	if t == nil {
		return nil
	}
	if tn.Decl != nil {
		t = c.derive(t, tn.Decl.Type, "")
	}
	if t != nil {
		c.info.TypeNames[tn] = t
	}
	return t
}
