package format

// ArgKind classifies the D type of a printf/printa argument for the
// conversion checks.
type ArgKind int

// Argument kinds. Enums count as ArgInt (D treats them as integers).
const (
	ArgOther      ArgKind = iota // struct, union, void, aggregation, ...
	ArgInt                       // integer or enum
	ArgPointer                   // pointer
	ArgFloat                     // float, double, long double
	ArgString                    // D string
	ArgCharArray                 // array of char
	ArgWCharArray                // array of a 32-bit integer (wchar_t)
	ArgStack                     // stack(), ustack(), jstack()
	ArgSymAddr                   // _symaddr: sym(), func(), mod()
	ArgUSymAddr                  // _usymaddr: usym(), ufunc(), umod(), uaddr()
)

// ArgType describes the D type of one argument as far as the checks
// need it.
type ArgType struct {
	Kind ArgKind
	// Name is the type name as dtrace prints it in messages: "int",
	// "string", "char [5]", "aggregation", "void", "stack".
	Name   string
	Size   int
	Signed bool
	// Base is the name of the integer type after resolving typedefs
	// ("short", "unsigned long", "long long"); %hx, %lx and %llx check it.
	Base string
	// Typedefs lists the typedef names the type goes through, outermost
	// first ("uint64_t" for a uint64_t); %llx accepts [u]int64_t.
	Typedefs []string
}

// ValidateOptions tell Validate which action the format belongs to.
type ValidateOptions struct {
	// Func is the action's name, used in messages ("printf", "printa").
	Func string
	// ArgOffset is the number of action arguments before the first
	// value argument (1: the format string itself).
	ArgOffset int
	// ExactLen rejects extra arguments (printf and friends, not printa).
	ExactLen bool
	// Aggregation allows %@ (printa).
	Aggregation bool
	// AggResult is the type of the aggregation result for %@: uint64_t
	// for count(), int64_t otherwise. Defaults to int64_t.
	AggResult *ArgType
	// Target says whether $target is defined (-p/-c), which lets %A take
	// plain integers and pointers.
	Target bool
}

// Int64Type and Uint64Type are the aggregation result types dtrace uses
// for %@ conversions.
var (
	Int64Type  = ArgType{Kind: ArgInt, Name: "int64_t", Size: 8, Signed: true, Base: "long", Typedefs: []string{"int64_t"}}
	Uint64Type = ArgType{Kind: ArgInt, Name: "uint64_t", Size: 8, Base: "unsigned long", Typedefs: []string{"uint64_t"}}
)

// namedTypes are the types pfcheck_type compares against.
var namedTypes = map[string]ArgType{
	"short":              {Kind: ArgInt, Size: 2, Signed: true},
	"unsigned short":     {Kind: ArgInt, Size: 2},
	"int":                {Kind: ArgInt, Size: 4, Signed: true},
	"long":               {Kind: ArgInt, Size: 8, Signed: true},
	"unsigned long":      {Kind: ArgInt, Size: 8},
	"long long":          {Kind: ArgInt, Size: 8, Signed: true},
	"unsigned long long": {Kind: ArgInt, Size: 8},
	"long double":        {Kind: ArgFloat, Size: 16},
}

func isInt(a *ArgType) bool { return a.Kind == ArgInt }

// accepts implements dtrace's pfcheck_* functions.
func (ci *convInfo) accepts(a *ArgType, target bool) bool {
	switch ci.check {
	case cAddr:
		return a.Kind == ArgPointer || isInt(a)
	case cKaddr:
		return a.Kind == ArgPointer || isInt(a) || a.Kind == ArgSymAddr
	case cUaddr:
		if a.Kind == ArgUSymAddr {
			return true
		}
		return target && (a.Kind == ArgPointer || isInt(a))
	case cStack:
		return a.Kind == ArgStack
	case cTime:
		return isInt(a) && a.Size == 8
	case cStr:
		return a.Kind == ArgString || a.Kind == ArgCharArray
	case cWstr:
		return a.Kind == ArgWCharArray
	case cCSI:
		return isInt(a) && a.Size <= 4
	case cFP:
		return a.Kind == ArgFloat
	case cXint, cDint:
		return isInt(a)
	case cXshort:
		return isInt(a) && (a.Base == "short" || a.Base == "signed short" || a.Base == "unsigned short")
	case cXlong:
		return isInt(a) && (a.Base == "long" || a.Base == "signed long" || a.Base == "unsigned long")
	case cXlonglong:
		if isInt(a) && (a.Base == "long long" || a.Base == "signed long long" || a.Base == "unsigned long long") {
			return true
		}
		for _, t := range a.Typedefs {
			if t == "int64_t" || t == "uint64_t" {
				return true
			}
		}
		return false
	case cType:
		want, ok := namedTypes[ci.proto]
		if !ok {
			return false
		}
		return a.Kind == want.Kind && a.Size == want.Size && (a.Kind != ArgInt || a.Signed == want.Signed)
	}
	return false
}

// Accepts reports whether the conversion takes an argument of type a
// (without $target; see ValidateOptions.Target).
func (c *Conv) Accepts(a ArgType) bool {
	return c.info != nil && c.info.accepts(&a, false)
}

// Prototype returns the text dtrace prints as the conversion's prototype
// in type errors ("char, short, int, long, or long long").
func (c *Conv) Prototype() string {
	if c.info == nil {
		return ""
	}
	return c.info.proto
}

// Validate checks the arguments of a printf-like action against the
// format, as dt_printf_validate does, and returns an *Error carrying
// dtrace's tag and message for the first problem: D_PRINTF_FMT_EMPTY,
// D_PRINTF_DYN_PROTO, D_PRINTF_DYN_TYPE, D_PRINTF_AGG_CONV,
// D_PRINTF_ARG_PROTO, D_PRINTF_ARG_TYPE or D_PRINTF_ARG_EXTRA.
// For printa, args are the aggregation's key types.
func (f *Format) Validate(args []ArgType, o ValidateOptions) error {
	if f.Src == "" {
		return errorf("D_PRINTF_FMT_EMPTY", "%s( ) format string is empty", o.Func)
	}
	agg := Int64Type
	if o.AggResult != nil {
		agg = *o.AggResult
	}
	j := 0 // next argument
	for i := range f.Convs {
		c := &f.Convs[i]
		if c.info == nil || c.info.print == pPct {
			continue
		}
		var dyns []string
		if c.Flags&FlagDynPrec != 0 {
			dyns = append(dyns, ".*")
		}
		if c.Flags&FlagDynWidth != 0 {
			dyns = append(dyns, "*")
		}
		for k := len(dyns); k > 0; k-- {
			d := dyns[k-1]
			if j >= len(args) {
				return errorf("D_PRINTF_DYN_PROTO", "%s( ) prototype mismatch: conversion #%d (%%%s) is missing a corresponding \"%s\" argument", o.Func, i+1, c.Name, d)
			}
			if !isInt(&args[j]) {
				return errorf("D_PRINTF_DYN_TYPE", "%s( ) argument #%d is incompatible with conversion #%d prototype:\n\tconversion: %% %s %s\n\t prototype: int\n\t  argument: %s", o.Func, j+o.ArgOffset+1, i+1, d, c.Name, args[j].Name)
			}
			j++
		}
		var v *ArgType
		var vname string
		switch {
		case c.Flags&FlagAgg != 0:
			if !o.Aggregation {
				return errorf("D_PRINTF_AGG_CONV", "%%@ conversion requires an aggregation and is not for use with %s( )", o.Func)
			}
			v, vname = &agg, "aggregating action"
		case j >= len(args):
			return errorf("D_PRINTF_ARG_PROTO", "%s( ) prototype mismatch: conversion #%d (%%%s) is missing a corresponding value argument", o.Func, i+1, c.Name)
		default:
			v = &args[j]
			vname = "argument #" + itoa(j+o.ArgOffset+1)
			j++
		}
		if !c.info.accepts(v, o.Target) {
			return errorf("D_PRINTF_ARG_TYPE", "%s( ) %s is incompatible with conversion #%d prototype:\n\tconversion: %%%s\n\t prototype: %s\n\t  argument: %s", o.Func, vname, i+1, c.Name, c.info.proto, v.Name)
		}
	}
	if o.ExactLen && j < len(args) {
		return errorf("D_PRINTF_ARG_EXTRA", "%s( ) prototype mismatch: only %d arguments required by this format string", o.Func, j)
	}
	return nil
}
