package dtrace

import (
	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/types"
	"github.com/dtrace-go/dtrace/format"
)

// checkFormat is the checker's format hook: it validates a printf-like
// format string against the D types of the arguments.
func checkFormat(target bool) func(fn, fmtstr string, args []types.Type) error {
	return func(fn, fmtstr string, args []types.Type) error {
		f, err := format.Parse(fmtstr)
		if err != nil {
			return formatErr(err)
		}
		opts := format.ValidateOptions{Func: fn, ArgOffset: 1, ExactLen: fn != "printa", Target: target}
		var ats []format.ArgType
		if fn == "printa" {
			opts.Aggregation = true
			// args[0] is the aggregation; the rest are its keys.
			if len(args) > 0 {
				args = args[1:]
			}
		}
		for _, t := range args {
			ats = append(ats, argType(t))
		}
		return formatErr(f.Validate(ats, opts))
	}
}

// formatErr keeps the D_* tag of a format error.
func formatErr(err error) error {
	if err == nil {
		return nil
	}
	if fe, ok := err.(*format.Error); ok {
		if tag, ok := check.TagByName(fe.Tag); ok {
			return &check.Error{Tag: tag, Msg: fe.Msg}
		}
	}
	return err
}

// argType describes a D type for the format checks.
func argType(t types.Type) format.ArgType {
	at := format.ArgType{Name: types.TypeString(t), Size: int(t.Size())}
	// Record the typedef chain for %llx and friends.
	for u := t; u != nil; {
		switch x := u.(type) {
		case *types.Typedef:
			at.Typedefs = append(at.Typedefs, x.Name)
			u = x.Type
			continue
		case *types.Qualified:
			u = x.Type
			continue
		}
		break
	}
	u := types.Underlying(t)
	switch u.Kind() {
	case types.KindInt, types.KindEnum:
		at.Kind = format.ArgInt
		at.Signed = types.IsSigned(t)
		if b, ok := u.(*types.Basic); ok {
			at.Base = b.Name
		}
	case types.KindFloat:
		at.Kind = format.ArgFloat
	case types.KindPointer:
		at.Kind = format.ArgPointer
	case types.KindString:
		at.Kind = format.ArgString
	case types.KindArray:
		if types.IsCharArray(t) {
			at.Kind = format.ArgCharArray
		}
	case types.KindStack:
		at.Kind = format.ArgStack
	case types.KindSymaddr:
		at.Kind = format.ArgSymAddr
	case types.KindUsymaddr:
		at.Kind = format.ArgUSymAddr
	}
	return at
}
