package check

import (
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
	"github.com/dtrace-go/dtrace/format"
)

// argType describes a D type for the format package's checks.
func argType(t types.Type) format.ArgType {
	a := format.ArgType{Name: types.TypeString(t), Size: int(t.Size())}
	for u := t; ; {
		if td, ok := u.(*types.Typedef); ok {
			a.Typedefs = append(a.Typedefs, td.Name)
			u = td.Type
			continue
		}
		if q, ok := u.(*types.Qualified); ok {
			u = q.Type
			continue
		}
		break
	}
	switch u := types.Underlying(t).(type) {
	case *types.Basic:
		switch u.K {
		case types.KindInt:
			a.Kind, a.Signed, a.Base = format.ArgInt, u.Signed, u.Name
		case types.KindFloat:
			a.Kind = format.ArgFloat
		}
	case *types.Enum:
		a.Kind, a.Signed, a.Base = format.ArgInt, true, "int"
	case *types.Pointer:
		a.Kind = format.ArgPointer
	case *types.String:
		a.Kind = format.ArgString
	case *types.Array:
		if types.IsCharArray(u) {
			a.Kind = format.ArgCharArray
		} else if b, ok := types.Underlying(u.Elem).(*types.Basic); ok && b.K == types.KindInt && b.Bytes == 4 {
			a.Kind = format.ArgWCharArray
		}
	case *types.Special:
		if k, ok := specialArgs[u.K]; ok {
			a.Kind = k
		} else if u.K == types.KindOpaque {
			// Unknown kernel types: accept them as integers.
			a.Kind, a.Size, a.Signed, a.Base = format.ArgInt, 8, true, "long"
		}
	}
	return a
}

// specialArgs are the format kinds of D's stack and symbol types.
var specialArgs = map[types.Kind]format.ArgKind{
	types.KindStack:    format.ArgStack,
	types.KindSymaddr:  format.ArgSymAddr,
	types.KindUsymaddr: format.ArgUSymAddr,
}

// formatErr reports a format package error with its tag.
func (c *checker) formatErr(pos syntax.Pos, err error) bool {
	if fe, ok := err.(*format.Error); ok {
		tag, ok := TagByName(fe.Tag)
		if !ok {
			tag = D_UNKNOWN
		}
		c.errorf(pos, tag, "%s", fe.Msg)
		return false
	}
	c.errorf(pos, D_UNKNOWN, "%s", err.Error())
	return false
}

// checkPrintf checks the format string of printf, system and freopen
// against the argument types (dtrace does this while generating code).
func (c *checker) checkPrintf(e *syntax.CallExpr, fn *Func, tvs []TypeAndValue) bool {
	pos := c.last(e)
	if len(tvs) == 0 {
		return true
	}
	if tvs[0].Value == nil || !tvs[0].Value.IsStr {
		c.errorf(pos, D_PRINTF_ARG_FMT, "%s( ) argument #1 is incompatible with prototype:\n\tprototype: string constant\n\t argument: %s", fn.Name, types.TypeString(tvs[0].Type))
		return false
	}
	src := tvs[0].Value.Str
	if fn.Name == "freopen" {
		if src == "." {
			c.errorf(pos, D_FREOPEN_INVALID, "%s( ) argument #1 cannot be \"%s\"", fn.Name, src)
			return false
		}
		if src == "" {
			return true
		}
	}
	f, err := format.Parse(src)
	if err != nil {
		return c.formatErr(pos, err)
	}
	args := make([]format.ArgType, len(tvs)-1)
	for i := range args {
		args[i] = argType(tvs[i+1].Type)
		if isOpaque(tvs[i+1].Type) {
			// Unknown kernel types: the conversions cannot be checked.
			c.info.Formats[e] = f
			return true
		}
	}
	if err := f.Validate(args, format.ValidateOptions{Func: fn.Name, ArgOffset: 1, ExactLen: true, Target: c.hasTarget()}); err != nil {
		return c.formatErr(pos, err)
	}
	c.info.Formats[e] = f
	return true
}

func (c *checker) hasTarget() bool {
	_, ok := c.conf.Macros["target"]
	return ok
}

// checkPrinta checks printa's aggregations and optional format.
func (c *checker) checkPrinta(e *syntax.CallExpr, tvs []TypeAndValue) bool {
	pos := c.last(e)
	argr := 1
	var src *string
	aggArgs := e.Args
	if len(e.Args) > 0 {
		if _, ok := syntax.Unparen(e.Args[0]).(*syntax.StringLit); ok {
			s := tvs[0].Value.Str
			src = &s
			aggArgs = e.Args[1:]
			argr = 2
		}
	}
	if len(e.Args) < argr {
		c.errorf(pos, D_PRINTA_PROTO, "printa( ) prototype mismatch: %d args passed, %d expected", len(e.Args), argr)
		return false
	}
	var proto *Agg
	for i, a := range aggArgs {
		ae, ok := syntax.Unparen(a).(*syntax.AggExpr)
		if !ok {
			c.errorf(pos, D_PRINTA_AGGARG, "printa( ) argument #%d is incompatible with prototype:\n\tprototype: aggregation\n\t argument: %s", argr+i, types.TypeString(tvs[argr-1+i].Type))
			return false
		}
		agg := c.aggs[ae.Name]
		if agg == nil {
			c.errorf(pos, D_PRINTA_AGGBAD, "undefined aggregation: @%s", ae.Name)
			return false
		}
		if proto != nil {
			if len(proto.Keys) != len(agg.Keys) {
				pl := func(n int) string {
					if n == 1 {
						return ""
					}
					return "s"
				}
				c.errorf(pos, D_PRINTA_AGGKEY, "printa( ): @%s and @%s do not have matching key signatures: @%s has %d key%s, @%s has %d key%s",
					proto.Name, agg.Name, proto.Name, len(proto.Keys), pl(len(proto.Keys)), agg.Name, len(agg.Keys), pl(len(agg.Keys)))
				return false
			}
			for k := range proto.Keys {
				if !c.argCompat(proto.Keys[k], nil, TypeAndValue{Type: agg.Keys[k]}) {
					c.errorf(pos, D_PRINTA_AGGPROTO, "printa( ): @%s[ ] key #%d is incompatible with @%s:\n%9s key #%d: %s\n%9s key #%d: %s",
						agg.Name, k+1, proto.Name, proto.Name, k+1, types.TypeString(proto.Keys[k]), agg.Name, k+1, types.TypeString(agg.Keys[k]))
					return false
				}
			}
		} else {
			proto = agg
		}
		if src != nil {
			f, err := format.Parse(*src)
			if err != nil {
				return c.formatErr(pos, err)
			}
			keys := make([]format.ArgType, len(agg.Keys))
			for k, kt := range agg.Keys {
				keys[k] = argType(kt)
			}
			o := format.ValidateOptions{Func: "printa", ArgOffset: 1, Aggregation: true, Target: c.hasTarget()}
			if agg.Func == "count" {
				u := format.Uint64Type
				o.AggResult = &u
			}
			if err := f.Validate(keys, o); err != nil {
				return c.formatErr(pos, err)
			}
			c.info.Formats[e] = f
		}
	}
	return true
}
