package dtrace

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dtrace-go/dtrace/codegen"
)

// This file parses option values as libdtrace does: run-time words and
// C-notation numbers, sizes, rates and D versions.

// parseOptValue parses s as spec's kind asks; present is false for
// "-xname" with no value.
func parseOptValue(spec *OptionSpec, s string, present bool) (optValue, error) {
	v := optValue{Present: present, Str: s}
	switch spec.Kind {
	case KindFlag:
		if present {
			return v, ErrBadOptVal
		}
	case KindBool, KindCount, KindSize, KindRate:
		if !present {
			return v, nil
		}
		n, err := intParsers[spec.Kind](s)
		if err != nil {
			return v, err
		}
		v.Int = n
	case KindString, KindEnum:
		if !present || spec.Kind == KindEnum && !slices.Contains(spec.Enum, s) {
			return v, ErrBadOptVal
		}
	}
	return v, nil
}

// intParsers parse the values of the options of integer kinds.
var intParsers = map[OptionKind]func(string) (int64, error){
	KindBool: parseRuntimeValue, KindCount: parseRuntimeValue, KindSize: ParseSize, KindRate: ParseRate,
}

// runtimeWords are the words dtrace accepts for run-time integer options;
// the second of each pair unsets the option.
var runtimeWords = [][2]string{
	{"yes", "no"}, {"enable", "disable"}, {"enabled", "disabled"},
	{"true", "false"}, {"on", "off"}, {"set", "unset"},
}

// parseRuntimeValue parses the value of a run-time integer option: "" or a
// negative word gives Unset, a positive word 1, else a non-negative number
// in C notation (0x.., 0..).
func parseRuntimeValue(s string) (int64, error) {
	if s == "" {
		return Unset, nil
	}
	for _, w := range runtimeWords {
		if strings.EqualFold(w[0], s) {
			return 1, nil
		}
		if strings.EqualFold(w[1], s) {
			return Unset, nil
		}
	}
	n, rest, ok := parseCUint(s)
	if !ok || rest != "" || n > 1<<63-1 {
		return 0, ErrBadOptVal
	}
	return int64(n), nil
}

// parseCUint parses the longest prefix of s that strtoull(s, &end, 0)
// would, refusing a leading minus sign (dtrace rejects negative values).
func parseCUint(s string) (uint64, string, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	t = strings.TrimPrefix(t, "+")
	if strings.HasPrefix(t, "-") {
		return 0, s, false
	}
	base := 10
	digits := t
	switch {
	case len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') && isDigit(t[2], 16):
		base, digits = 16, t[2:]
	case len(t) > 1 && t[0] == '0':
		base, digits = 8, t[1:]
	}
	i := 0
	for i < len(digits) && isDigit(digits[i], base) {
		i++
	}
	if i == 0 {
		if base == 8 { // a lone "0"
			return 0, digits, true
		}
		return 0, s, false
	}
	n, err := strconv.ParseUint(digits[:i], base, 64)
	if err != nil {
		return 0, "", false
	}
	return n, digits[i:], true
}

func isDigit(c byte, base int) bool {
	switch {
	case c >= '0' && c <= '9':
		return int(c-'0') < base
	case base == 16 && c >= 'a' && c <= 'f', base == 16 && c >= 'A' && c <= 'F':
		return true
	}
	return false
}

// ParseSize parses a size as dtrace does: a non-negative number with an
// optional k, m, g or t suffix (either case), in bytes.
func ParseSize(s string) (int64, error) {
	if s == "" {
		return 0, ErrBadOptVal
	}
	mul := uint64(1)
	body := s
	switch s[len(s)-1] {
	case 't', 'T':
		mul = 1 << 40
	case 'g', 'G':
		mul = 1 << 30
	case 'm', 'M':
		mul = 1 << 20
	case 'k', 'K':
		mul = 1 << 10
	}
	if mul > 1 {
		body = s[:len(s)-1]
	}
	n, rest, ok := parseCUint(body)
	if !ok || rest != "" {
		return 0, ErrBadOptVal
	}
	if n != 0 && n*mul/mul != n || n*mul > 1<<63-1 {
		return 0, ErrBadOptVal
	}
	return int64(n * mul), nil
}

var rateSuffixes = []struct {
	name string
	mul  int64 // 0 means hz
}{
	{"ns", 1}, {"nsec", 1},
	{"us", 1e3}, {"usec", 1e3},
	{"ms", 1e6}, {"msec", 1e6},
	{"s", 1e9}, {"sec", 1e9},
	{"m", 60e9}, {"min", 60e9},
	{"h", 3600e9}, {"hour", 3600e9},
	{"d", 86400e9}, {"day", 86400e9},
	{"hz", 0},
}

// ParseRate parses a rate as dtrace does and returns the interval in
// nanoseconds: a number with a time suffix (ns, us, ms, s, m, h, d and
// their long forms), a frequency ("100hz"), or a bare number of
// nanoseconds.
func ParseRate(s string) (int64, error) {
	n, rest, ok := parseCUint(s)
	if !ok {
		return 0, ErrBadOptVal
	}
	mul := int64(1)
	if rest != "" {
		found := false
		for _, sfx := range rateSuffixes {
			if strings.EqualFold(sfx.name, rest) {
				mul, found = sfx.mul, true
				break
			}
		}
		if !found {
			return 0, ErrBadOptVal
		}
	}
	if n > 1<<63-1 {
		return 0, ErrBadOptVal
	}
	if mul == 0 {
		if n == 0 {
			return 0, nil
		}
		return 1_000_000_000 / int64(n), nil
	}
	return int64(n) * mul, nil
}

// FormatSize renders a byte count as dtrace does in "lowered to" messages:
// "4m" when exact in a unit, else "N bytes".
func FormatSize(n int64) string {
	units := "kmgtpe"
	for i := len(units) - 1; i >= 0; i-- {
		sh := uint(10 * (i + 1))
		if n >= 1<<sh && n&(1<<sh-1) == 0 {
			return fmt.Sprintf("%d%c", n>>sh, units[i])
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// versions lists the D versions the compiler accepts for -xversion, in
// libdtrace's order.
var versions = []string{
	"1.0", "1.1", "1.2", "1.2.1", "1.2.2", "1.3", "1.4", "1.4.1", "1.5",
	"1.6", "1.6.1", "1.6.2", "1.6.3", "1.6.4", "1.7", "1.7.1", "1.8",
	"1.8.1", "2.0",
}

func versionNum(major, minor, micro uint32) uint32 {
	return major<<24 | minor<<12 | micro
}

// ParseVersion parses "M[.m[.u]]" into its __SUNW_D_VERSION encoding.
// A malformed string gives ErrVersInval; a well-formed one that no D
// release carries gives ErrVersUndef.
func ParseVersion(s string) (uint32, error) {
	parts := strings.Split(s, ".")
	if len(parts) > 3 || s == "" {
		return 0, ErrVersInval
	}
	var n [3]uint32
	limits := [3]uint64{0xff, 0xfff, 0xfff}
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil || p == "" || v > limits[i] {
			return 0, ErrVersInval
		}
		n[i] = uint32(v)
	}
	num := versionNum(n[0], n[1], n[2])
	for _, known := range versions {
		if k, _ := parseVersionSyntax(known); k == num {
			return num, nil
		}
	}
	return 0, ErrVersUndef
}

func parseVersionSyntax(s string) (uint32, bool) {
	var n [3]uint32
	for i, p := range strings.Split(s, ".") {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return 0, false
		}
		n[i] = uint32(v)
	}
	return versionNum(n[0], n[1], n[2]), true
}

// symbolLink is the linkmode and knodefs options as code generation takes
// them: kernel symbols the mode leaves to link time are refused unless
// knodefs allows them undefined (they are then compiled in, as every
// kernel symbol is under linkmode kernel and static).
func (o *Options) symbolLink() codegen.SymbolLink {
	switch {
	case o.KNoDefs:
		return codegen.LinkStatic
	case o.LinkMode == "dynamic":
		return codegen.LinkDynamic
	case o.LinkMode == "primary":
		return codegen.LinkPrimary
	}
	return codegen.LinkStatic
}
