package types

import (
	"strconv"
	"strings"
)

// TypeString returns the C spelling of t the way dtrace prints types in
// messages: "char *", "int [10]", "int (*)(int)", "const char *".
func TypeString(t Type) string {
	base, decl := declare(t, "")
	if decl == "" {
		return base
	}
	return base + " " + decl
}

// declare returns the base type name and the declarator text that wraps
// inner, reading derivations from the outside in.
func declare(t Type, inner string) (base, decl string) {
	switch t := t.(type) {
	case *Pointer:
		return declare(t.Elem, "*"+inner)
	case *Qualified:
		if _, ok := t.Type.(*Pointer); ok {
			return declare(t.Type, t.Quals.String()+inner)
		}
		b, d := declare(t.Type, inner)
		return t.Quals.String() + " " + b, d
	case *Array:
		if strings.HasPrefix(inner, "*") {
			inner = "(" + inner + ")"
		}
		n := ""
		if t.Len > 0 {
			n = strconv.FormatInt(t.Len, 10)
		}
		return declare(t.Elem, inner+"["+n+"]")
	case *Func:
		if strings.HasPrefix(inner, "*") {
			inner = "(" + inner + ")"
		}
		ps := make([]string, 0, len(t.Params)+1)
		for _, p := range t.Params {
			ps = append(ps, TypeString(p))
		}
		if t.Variadic {
			ps = append(ps, "...")
		}
		return declare(t.Result, inner+"("+strings.Join(ps, ", ")+")")
	case nil:
		return "<nil>", inner
	default:
		return t.String(), inner
	}
}
