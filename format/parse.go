package format

import (
	"fmt"
	"strconv"
	"strings"
)

// Flags are the flag characters of one conversion.
type Flags uint16

// Conversion flags, as dtrace records them while parsing.
const (
	FlagAlt      Flags = 1 << iota // '#'
	FlagZero                       // '0'
	FlagLeft                       // '-'
	FlagPlus                       // '+'
	FlagDynWidth                   // '*' before '.'
	FlagDynPrec                    // '*' after '.'
	FlagGroup                      // '\''
	FlagSpace                      // ' '
	FlagAgg                        // '@': consumes the aggregation result
)

// Conv is one piece of a parsed format: literal text (Prefix) followed by
// an optional conversion. A Conv with an empty Name is trailing text only.
type Conv struct {
	Prefix string
	// Name is the conversion as dtrace names it, length modifiers
	// included: "d", "llx", "hd", "s", "%", ...
	Name  string
	Flags Flags
	Width int
	Prec  int
	info  *convInfo
}

// Format is a parsed D format string (printf, printa, system, freopen).
type Format struct {
	Src   string
	Convs []Conv
}

// Error is a compile-time error found in a format string or in the
// arguments given for it. Tag is DTrace's error tag ("D_SYNTAX",
// "D_PRINTF_ARG_TYPE", ...); Msg is dtrace's message without the
// trailing newline.
type Error struct {
	Tag string
	Msg string
}

// Error returns the message.
func (e *Error) Error() string { return e.Msg }

func errorf(tag, f string, args ...any) *Error {
	return &Error{Tag: tag, Msg: fmt.Sprintf(f, args...)}
}

// printKind says how a conversion turns a value into text.
type printKind int

const (
	pSint    printKind = iota // signed integer per size
	pUint                     // unsigned integer per size
	pDint                     // signed or unsigned, as the value is
	pFloat                    // e E f g G
	pAddr                     // %a kernel address to symbol
	pUaddr                    // %A user address to symbol
	pStack                    // %k
	pTime                     // %Y
	pTime822                  // %T
	pCstr                     // %s
	pWstr                     // %ls %ws
	pEstr                     // %S escaped string
	pEchr                     // %C escaped char
	pPct                      // %%
)

// checkKind says which argument types a conversion accepts.
type checkKind int

const (
	cAddr checkKind = iota
	cKaddr
	cUaddr
	cStack
	cTime
	cStr
	cWstr
	cCSI
	cFP
	cXint
	cDint
	cXshort
	cXlong
	cXlonglong
	cType // exactly compatible with the named type in proto
)

type convInfo struct {
	ofmt  byte // C conversion character used to print
	proto string
	check checkKind
	print printKind
}

const (
	protoXint  = "char, short, int, long, or long long"
	protoCSI   = "char, short, or int"
	protoFP    = "float, double, or long double"
	protoAddr  = "pointer or integer"
	protoUaddr = "pointer or integer (with -p/-c) or _usymaddr (without -p/-c)"
	protoCstr  = "char [] or string (or use stringof)"
	protoWstr  = "wchar_t []"
)

// conversions is dtrace's printf conversion table (dt_printf.c).
var conversions = map[string]*convInfo{
	"a":  {'s', protoAddr, cKaddr, pAddr},
	"A":  {'s', protoUaddr, cUaddr, pUaddr},
	"c":  {'c', protoCSI, cCSI, pSint},
	"C":  {'s', protoCSI, cCSI, pEchr},
	"k":  {'s', "stack", cStack, pStack},
	"lc": {'c', "int", cType, pSint},
	"ls": {'s', protoWstr, cWstr, pWstr},
	"p":  {'x', protoAddr, cAddr, pUint},
	"s":  {'s', protoCstr, cStr, pCstr},
	"S":  {'s', protoCstr, cStr, pEstr},
	"T":  {'s', "int64_t", cTime, pTime822},
	"wc": {'c', "int", cType, pSint},
	"ws": {'s', protoWstr, cWstr, pWstr},
	"Y":  {'s', "int64_t", cTime, pTime},
	"%":  {'%', "void", cType, pPct},
}

// The integer conversions (%d ... %X, %hd ... %llX) and the
// floating-point ones (%e ... %LG) are a row a conversion character in
// each group.
func init() {
	for _, z := range []struct {
		size string
		typ  string
		hex  checkKind
	}{{"h", "short", cXshort}, {"l", "long", cXlong}, {"ll", "long long", cXlonglong}} {
		for _, c := range "di" {
			conversions[z.size+string(c)] = &convInfo{byte(c), z.typ, cType, pSint}
		}
		for _, c := range "ou" {
			conversions[z.size+string(c)] = &convInfo{byte(c), "unsigned " + z.typ, cType, pUint}
		}
		for _, c := range "xX" {
			conversions[z.size+string(c)] = &convInfo{byte(c), z.typ, z.hex, pUint}
		}
	}
	for _, c := range "di" {
		conversions[string(c)] = &convInfo{byte(c), protoXint, cDint, pDint}
	}
	for _, c := range "ouxX" {
		conversions[string(c)] = &convInfo{byte(c), protoXint, cXint, pUint}
	}
	for _, c := range "eEfgG" {
		conversions[string(c)] = &convInfo{byte(c), protoFP, cFP, pFloat}
		conversions["L"+string(c)] = &convInfo{byte(c), "long double", cType, pFloat}
	}
}

// Parse splits a D format string into literal text and conversions, with
// dtrace's rules and error messages (all tagged D_SYNTAX, as the compiler
// reports them while parsing the program).
func Parse(s string) (*Format, error) {
	f := &Format{Src: s}
	q := 0
	for {
		rel := strings.IndexByte(s[q:], '%')
		if rel < 0 {
			break
		}
		p := q + rel
		cv := Conv{Prefix: s[q:p]}
		n := len(f.Convs) + 1
		name := ""
		digits, dot := 0, 0
	loop:
		for {
			p++
			if p >= len(s) {
				return nil, errorf("D_SYNTAX", "format conversion #%d name expected before end of format string", n)
			}
			c := s[p]
			switch {
			case c >= '0' && c <= '9':
				if dot == 0 && digits == 0 && c == '0' {
					cv.Flags |= FlagZero
					cv.Flags &^= FlagLeft
					continue
				}
				v := 0
				for p < len(s) && s[p] >= '0' && s[p] <= '9' {
					v = int(int32(v*10 + int(s[p]-'0'))) // C int arithmetic
					p++
				}
				p--
				if dot != 0 {
					cv.Prec = v
				} else {
					cv.Width = v
				}
				digits++
			case c == '#':
				cv.Flags |= FlagAlt
			case c == '*':
				fl, what := FlagDynWidth, "width"
				if dot != 0 {
					fl, what = FlagDynPrec, "precision"
				}
				if cv.Flags&fl != 0 {
					return nil, errorf("D_SYNTAX", "format conversion #%d has more than one '*' specified for the output %s", n, what)
				}
				cv.Flags |= fl
			case c == '+':
				cv.Flags |= FlagPlus
			case c == '-':
				cv.Flags |= FlagLeft
				cv.Flags &^= FlagZero
			case c == '.':
				if dot != 0 {
					return nil, errorf("D_SYNTAX", "format conversion #%d has more than one '.' specified", n)
				}
				dot++
				digits = 0
			case c == '?':
				cv.Width = 16 // LP64
			case c == '@':
				cv.Flags |= FlagAgg
			case c == '\'':
				cv.Flags |= FlagGroup
			case c == ' ':
				cv.Flags |= FlagSpace
			case c == '$':
				return nil, errorf("D_SYNTAX", "format conversion #%d uses unsupported positional format (%%n$)", n)
			case c == '%':
				if s[p-1] == '%' {
					name += "%"
					break loop
				}
				return nil, errorf("D_SYNTAX", "format conversion #%d cannot be combined with other format flags: %%%%", n)
			case c == 'h' || c == 'l' || c == 'L' || c == 'w':
				if len(name) < 6 {
					name += string(c)
				}
			default:
				name += string(c)
				break loop
			}
		}
		cv.Name = name
		cv.info = conversions[name]
		if cv.info == nil {
			return nil, errorf("D_SYNTAX", "format conversion #%d is undefined: %%%s", n, name)
		}
		f.Convs = append(f.Convs, cv)
		q = p + 1
	}
	if q < len(s) || s == "" {
		f.Convs = append(f.Convs, Conv{Prefix: s[q:]})
	}
	return f, nil
}

// IsConv reports whether c holds a conversion (not only literal text).
func (c *Conv) IsConv() bool { return c.info != nil }

// NumArgs returns how many arguments the format consumes (dynamic widths
// and precisions included, %@ and %% excluded).
func (f *Format) NumArgs() int {
	n := 0
	for i := range f.Convs {
		c := &f.Convs[i]
		if c.info == nil || c.info.print == pPct {
			continue
		}
		if c.Flags&FlagDynWidth != 0 {
			n++
		}
		if c.Flags&FlagDynPrec != 0 {
			n++
		}
		if c.Flags&FlagAgg == 0 {
			n++
		}
	}
	return n
}

// HasAgg reports whether the format has a %@ conversion.
func (f *Format) HasAgg() bool {
	for _, c := range f.Convs {
		if c.Flags&FlagAgg != 0 {
			return true
		}
	}
	return false
}

// HasUaddr reports whether the format has a %A conversion: a user
// address named from the objects the process maps.
func (f *Format) HasUaddr() bool {
	for _, c := range f.Convs {
		if c.info != nil && c.info.print == pUaddr {
			return true
		}
	}
	return false
}

// String returns the conversion as written, flags normalized ("%-*d").
func (c *Conv) String() string {
	if c.info == nil {
		return ""
	}
	var b strings.Builder
	b.WriteByte('%')
	for _, x := range []struct {
		f Flags
		s string
	}{{FlagAlt, "#"}, {FlagZero, "0"}, {FlagLeft, "-"}, {FlagPlus, "+"}, {FlagDynWidth, "*"}, {FlagDynPrec, ".*"}, {FlagGroup, "'"}, {FlagSpace, " "}, {FlagAgg, "@"}} {
		if c.Flags&x.f != 0 {
			b.WriteString(x.s)
		}
	}
	if c.Width != 0 {
		b.WriteString(strconv.Itoa(c.Width))
	}
	if c.Prec != 0 {
		b.WriteString("." + strconv.Itoa(c.Prec))
	}
	b.WriteString(c.Name)
	return b.String()
}
