package dtrace

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// This file holds the table of dtrace options: what `-x name[=value]`,
// `#pragma D option name[=value]`, DTRACE_OPT_* environment variables and the
// setopt() action accept, with the defaults and error messages of
// illumos/Oracle dtrace.

// Option errors. Their texts are libdtrace's, because dtrace(1M) prints them
// verbatim after "failed to set -x NAME: " and the compiler after
// "failed to set option 'NAME' to 'VALUE': ".
var (
	ErrBadOptName    = errors.New("Invalid option name")
	ErrBadOptVal     = errors.New("Invalid value for specified option")
	ErrBadOptCtx     = errors.New("Option cannot be used from within a D program")
	ErrVersInval     = errors.New("Version is not properly formatted or is too large")
	ErrVersUndef     = errors.New("Requested version is not supported by compiler")
	ErrActive        = errors.New("Operation illegal when tracing is active")
	ErrNoReg         = errors.New("Insufficient registers to generate code")
	ErrValueOverflow = errors.New("Value too large for defined data type")
)

// OptionKind says how an option's value is parsed.
type OptionKind int

// Option kinds.
const (
	// KindFlag takes no value ("-xzdefs"); giving one is an error.
	KindFlag OptionKind = iota
	// KindBool is a run-time toggle: no value, yes/no words, or a number.
	KindBool
	// KindCount is a non-negative number (yes/no words also accepted, as
	// dtrace does for every run-time integer option).
	KindCount
	// KindSize is a byte count with an optional k, m, g or t suffix.
	KindSize
	// KindRate is a time (ns, us, ms, s, m, h, d suffixes) or a frequency
	// (hz suffix), stored as nanoseconds.
	KindRate
	// KindString is any string value (required).
	KindString
	// KindEnum is one string from a fixed list.
	KindEnum
	// KindAny accepts anything, or nothing, and ignores it.
	KindAny
)

// OptionClass says when an option may be set.
type OptionClass int

// Option classes, as libdtrace divides them.
const (
	// CompileTime options shape compilation; setopt() cannot change them
	// after tracing starts and getopt() cannot read them.
	CompileTime OptionClass = iota
	// RunTime options are fixed once tracing is active.
	RunTime
	// DynamicRunTime options may change while tracing (setopt()).
	DynamicRunTime
)

// OptionSpec describes one option.
type OptionSpec struct {
	Name  string
	Kind  OptionKind
	Class OptionClass
	// NoPragma is set for options that only the command line or the
	// environment may set (cpp and linker paths, include directories, ...).
	NoPragma bool
	// Enum lists the accepted values of a KindEnum option.
	Enum []string
	set  func(o *Options, v optValue) error
}

// optValue is a parsed option argument; Present is false for "-xname".
type optValue struct {
	Present bool
	Str     string
	Int     int64 // for bool/count/size/rate kinds
}

// Unset is the value an integer option has when it is not set, mirroring
// DTRACEOPT_UNSET.
const Unset int64 = -2

// Buffer policies (bufpolicy option).
const (
	BufPolicySwitch = "switch"
	BufPolicyFill   = "fill"
	BufPolicyRing   = "ring"
)

// Default values of dtrace(1M) and libdtrace.
const (
	DefaultBufSize    = 4 << 20
	DefaultAggSize    = 4 << 20
	DefaultStrSize    = 256
	DefaultDynVarSize = 1 << 20
	DefaultSpecSize   = 4 << 20
	DefaultNSpec      = 1
	DefaultSwitchRate = 1_000_000_000 // 1hz
	DefaultAggRate    = 1_000_000_000 // 1hz
	DefaultStatusRate = 1_000_000_000 // 1hz
	DefaultCleanRate  = 9_900_990     // 101hz
	DefaultMaxFrames  = 127           // perf_event_max_stack on stock kernels
	DefaultStack      = 20
	DefaultUStack     = 100
	DefaultJStack     = 50
	DefaultJStackStr  = 512
	DefaultPrintSize  = 8192
	DefaultPcapSize   = 1518
	// DefaultVersion is the D language version this implementation speaks.
	DefaultVersion = "2.0"
)

// Options holds every dtrace option. NewOptions gives dtrace(1M)'s defaults;
// Set changes one option by name exactly as "-x name=value" does.
//
// Integer fields hold Unset when an option without a default is not set.
// Rates are in nanoseconds.
type Options struct {
	// Buffers and sizes (bytes).
	BufSize, AggSize, SpecSize, DynVarSize, ScratchSize int64
	StrSize, JStackStrSize, BPFLogSize, LockMem         int64
	PcapSize, PrintSize                                 int64
	// Rates (nanoseconds between events).
	SwitchRate, AggRate, StatusRate, CleanRate int64
	// Counts.
	NSpec, StackFrames, UStackFrames, JStackFrames, MaxFrames int64
	CPU                                                       int64
	AggSortPos, AggSortKeyPos                                 int64
	Tree, Disasm, IRegs, TRegs, UserUID, PgMax                int64

	// Run-time toggles.
	Quiet, FlowIndent, RawBytes, StackIndent, Destructive bool
	AggSortKey, AggSortRev, NoResolve, QuietResize        bool
	GrabAnon, BPFLog, AggPerCPU                           bool

	// Compiler flags. Verbose is the "verbose" option, set by -S: print
	// the compiled code (not -v, which the command handles itself).
	ArgRef, CPP, DefaultArgs, Empty, ErrTags, DropTags bool
	KNoDefs, UNoDefs, NoLibs, PSpec, ZDefs, Verbose    bool
	Strip, Debug, LazyLoad, LinkNoMmap, Core           bool

	// Enumerations.
	BufPolicy, BufResize, LinkMode, LinkType, XlateMode, EvalTime string
	// Stdc is the -X mode: "a", "c", "t" (ISO C, the default behaviour of
	// "a") or "s" (K&R, traditional cpp).
	Stdc string
	// Version is the requested D version ("2.0"), VersionNum its encoding
	// (major<<24 | minor<<12 | micro), as __SUNW_D_VERSION.
	Version    string
	VersionNum uint32

	// Paths and strings.
	CPPPath, LdPath, CTFPath, ModPath, ProcfsPath, SysLibDir string
	SysSlice, CTypes, DTypes, Amin, DebugAssert, OFormat     string
	LibDirs                                                  []string
	// CPPArgs are extra preprocessor arguments in command-line order:
	// -D, -U, -I (from -D/-U/-I, -xdefine, -xundef, -xincdir), -H (cpphdrs)
	// and the words of -xcppargs.
	CPPArgs []string

	set map[string]bool
}

// NewOptions returns the options as dtrace(1M) starts with them.
func NewOptions() *Options {
	return &Options{
		BufSize:       DefaultBufSize,
		AggSize:       DefaultAggSize,
		SpecSize:      DefaultSpecSize,
		DynVarSize:    DefaultDynVarSize,
		ScratchSize:   Unset,
		StrSize:       DefaultStrSize,
		JStackStrSize: DefaultJStackStr,
		BPFLogSize:    Unset,
		LockMem:       Unset,
		PcapSize:      DefaultPcapSize,
		PrintSize:     DefaultPrintSize,
		SwitchRate:    DefaultSwitchRate,
		AggRate:       DefaultAggRate,
		StatusRate:    DefaultStatusRate,
		CleanRate:     DefaultCleanRate,
		NSpec:         DefaultNSpec,
		StackFrames:   DefaultStack,
		UStackFrames:  DefaultUStack,
		JStackFrames:  DefaultJStack,
		MaxFrames:     DefaultMaxFrames,
		CPU:           Unset,
		AggSortPos:    Unset,
		AggSortKeyPos: Unset,
		Tree:          Unset,
		Disasm:        Unset,
		IRegs:         Unset,
		TRegs:         Unset,
		UserUID:       Unset,
		PgMax:         Unset,
		BufPolicy:     BufPolicySwitch,
		BufResize:     "auto",
		LinkMode:      "kernel",
		LinkType:      "elf",
		XlateMode:     "static",
		EvalTime:      "postinit",
		Stdc:          "a",
		Version:       DefaultVersion,
		VersionNum:    versionNum(2, 0, 0),
		CPPPath:       "/usr/bin/cpp",
		LdPath:        "/usr/bin/ld",
		ProcfsPath:    "/proc",
		OFormat:       "text",
		set:           map[string]bool{},
	}
}

// Set sets option name from the command line (-x), the environment or the
// library API. An empty value means "no value given", as in "-xquiet".
// The error is one of the Err* values (wrapped with nothing), so callers
// print it the way dtrace does.
func (o *Options) Set(name, value string) error {
	return o.set1(name, value, value != "", false)
}

// SetValue is Set with an explicit value even when it is empty
// ("-xquiet=" turns quiet off, as in dtrace).
func (o *Options) SetValue(name, value string) error {
	return o.set1(name, value, true, false)
}

// SetPragma sets an option from "#pragma D option name[=value]" inside a D
// program: options that steer the preprocessor or the linker are refused
// with ErrBadOptCtx there. hasValue is false for "#pragma D option name".
func (o *Options) SetPragma(name, value string, hasValue bool) error {
	return o.set1(name, value, hasValue, true)
}

// SetArg parses one -x argument, "name" or "name=value".
func (o *Options) SetArg(arg string) error {
	if name, value, ok := strings.Cut(arg, "="); ok {
		return o.SetValue(name, value)
	}
	return o.Set(arg, "")
}

// SetEnv applies DTRACE_OPT_<NAME>=value variables from environ (as from
// os.Environ), ignoring bad ones as dtrace does.
func (o *Options) SetEnv(environ []string) {
	const prefix = "DTRACE_OPT_"
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, prefix) {
			continue
		}
		name := strings.ToLower(strings.TrimPrefix(k, prefix))
		if _, known := LookupOption(name); known {
			_ = o.SetValue(name, v)
		}
	}
}

// IsSet reports whether option name was set explicitly (by any means).
func (o *Options) IsSet(name string) bool { return o.set[name] }

// Clone returns an independent copy, for trying a setopt() or a pragma
// without disturbing the original.
func (o *Options) Clone() *Options {
	c := *o
	c.LibDirs = append([]string(nil), o.LibDirs...)
	c.CPPArgs = append([]string(nil), o.CPPArgs...)
	c.set = make(map[string]bool, len(o.set))
	for k, v := range o.set {
		c.set[k] = v
	}
	return &c
}

// CheckSetopt validates a setopt("name", "value") action while tracing:
// unknown names give ErrBadOptName, options that cannot change once tracing
// is active give ErrActive, and bad values ErrBadOptVal. It does not change o.
func (o *Options) CheckSetopt(name, value string, hasValue bool) error {
	spec, ok := LookupOption(name)
	if !ok {
		return ErrBadOptName
	}
	if spec.Class == RunTime {
		return ErrActive
	}
	return o.Clone().set1(name, value, hasValue, false)
}

func (o *Options) set1(name, value string, hasValue, inProgram bool) error {
	spec, ok := LookupOption(name)
	if !ok {
		return ErrBadOptName
	}
	if inProgram && spec.NoPragma {
		return ErrBadOptCtx
	}
	v, err := parseOptValue(spec, value, hasValue)
	if err != nil {
		return err
	}
	if err := spec.set(o, v); err != nil {
		return err
	}
	if o.set == nil {
		o.set = map[string]bool{}
	}
	o.set[name] = true
	return nil
}

func parseOptValue(spec *OptionSpec, s string, present bool) (optValue, error) {
	v := optValue{Present: present, Str: s}
	switch spec.Kind {
	case KindFlag:
		if present {
			return v, ErrBadOptVal
		}
	case KindBool, KindCount:
		if !present {
			return v, nil
		}
		n, err := parseRuntimeValue(s)
		if err != nil {
			return v, err
		}
		v.Int = n
	case KindSize:
		if !present {
			return v, nil
		}
		n, err := ParseSize(s)
		if err != nil {
			return v, err
		}
		v.Int = n
	case KindRate:
		if !present {
			return v, nil
		}
		n, err := ParseRate(s)
		if err != nil {
			return v, err
		}
		v.Int = n
	case KindString:
		if !present {
			return v, ErrBadOptVal
		}
	case KindEnum:
		if !present {
			return v, ErrBadOptVal
		}
		for _, e := range spec.Enum {
			if e == s {
				return v, nil
			}
		}
		return v, ErrBadOptVal
	}
	return v, nil
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
	if strings.HasPrefix(t, "+") {
		t = t[1:]
	}
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

// LookupOption returns the description of the option called name.
func LookupOption(name string) (*OptionSpec, bool) {
	s, ok := optionTable[name]
	return s, ok
}

// OptionNames lists every option name, sorted.
func OptionNames() []string {
	names := make([]string, 0, len(optionTable))
	for n := range optionTable {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Field setters used by the table.

// intField sets an integer option; "-xname" alone sets it to 0, as
// libdtrace does for sizes, rates and counts.
func intField(f func(*Options) *int64) func(*Options, optValue) error {
	return func(o *Options, v optValue) error {
		if !v.Present {
			*f(o) = 0
			return nil
		}
		*f(o) = v.Int
		return nil
	}
}

// boolField sets a run-time toggle: on unless the value unsets it.
func boolField(f func(*Options) *bool) func(*Options, optValue) error {
	return func(o *Options, v optValue) error {
		*f(o) = !v.Present || v.Int != Unset
		return nil
	}
}

func flagField(f func(*Options) *bool, on bool) func(*Options, optValue) error {
	return func(o *Options, v optValue) error {
		*f(o) = on
		return nil
	}
}

func stringField(f func(*Options) *string) func(*Options, optValue) error {
	return func(o *Options, v optValue) error {
		*f(o) = v.Str
		return nil
	}
}

func cppArg(prefix string) func(*Options, optValue) error {
	return func(o *Options, v optValue) error {
		o.CPPArgs = append(o.CPPArgs, prefix+v.Str)
		return nil
	}
}

// atoi mimics C atoi for the few options libdtrace parses that way.
func atoi(s string) int64 {
	s = strings.TrimLeft(s, " \t")
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, _ := strconv.ParseInt(s[:i], 10, 64)
	return n
}

// difRegisters is DIF_DIR_NREGS, the only value iregs accepts.
const difRegisters = 8

var optionTable = map[string]*OptionSpec{}

func addOpt(s *OptionSpec) { optionTable[s.Name] = s }

func init() {
	ct, rt, drt := CompileTime, RunTime, DynamicRunTime

	// Compile-time flags.
	flags := []struct {
		name string
		f    func(*Options) *bool
		on   bool
	}{
		{"argref", func(o *Options) *bool { return &o.ArgRef }, true},
		{"cpp", func(o *Options) *bool { return &o.CPP }, true},
		{"defaultargs", func(o *Options) *bool { return &o.DefaultArgs }, true},
		{"empty", func(o *Options) *bool { return &o.Empty }, true},
		{"errtags", func(o *Options) *bool { return &o.ErrTags }, true},
		{"knodefs", func(o *Options) *bool { return &o.KNoDefs }, true},
		{"kdefs", func(o *Options) *bool { return &o.KNoDefs }, false},
		{"unodefs", func(o *Options) *bool { return &o.UNoDefs }, true},
		{"udefs", func(o *Options) *bool { return &o.UNoDefs }, false},
		{"nolibs", func(o *Options) *bool { return &o.NoLibs }, true},
		{"pspec", func(o *Options) *bool { return &o.PSpec }, true},
		{"zdefs", func(o *Options) *bool { return &o.ZDefs }, true},
		{"verbose", func(o *Options) *bool { return &o.Verbose }, true},
		{"strip", func(o *Options) *bool { return &o.Strip }, true},
		{"debug", func(o *Options) *bool { return &o.Debug }, true},
		{"aggpercpu", func(o *Options) *bool { return &o.AggPerCPU }, true},
		{"core", func(o *Options) *bool { return &o.Core }, true},
	}
	for _, fl := range flags {
		addOpt(&OptionSpec{Name: fl.name, Kind: KindFlag, Class: ct, set: flagField(fl.f, fl.on)})
	}
	// droptags, lazyload and linknommap ignore any value.
	addOpt(&OptionSpec{Name: "droptags", Kind: KindAny, Class: ct,
		set: func(o *Options, v optValue) error { o.DropTags = true; return nil }})
	addOpt(&OptionSpec{Name: "lazyload", Kind: KindAny, Class: ct,
		set: func(o *Options, v optValue) error { o.LazyLoad = true; return nil }})
	addOpt(&OptionSpec{Name: "linknommap", Kind: KindAny, Class: ct,
		set: func(o *Options, v optValue) error { o.LinkNoMmap = true; return nil }})

	// Preprocessor and paths: command line only.
	addOpt(&OptionSpec{Name: "define", Kind: KindString, Class: ct, NoPragma: true, set: cppArg("-D")})
	addOpt(&OptionSpec{Name: "undef", Kind: KindString, Class: ct, NoPragma: true, set: cppArg("-U")})
	addOpt(&OptionSpec{Name: "incdir", Kind: KindString, Class: ct, NoPragma: true, set: cppArg("-I")})
	addOpt(&OptionSpec{Name: "cpphdrs", Kind: KindFlag, Class: ct, NoPragma: true,
		set: func(o *Options, v optValue) error { o.CPPArgs = append(o.CPPArgs, "-H"); return nil }})
	addOpt(&OptionSpec{Name: "cppargs", Kind: KindString, Class: ct, NoPragma: true,
		set: func(o *Options, v optValue) error {
			o.CPPArgs = append(o.CPPArgs, strings.Fields(v.Str)...)
			return nil
		}})
	paths := []struct {
		name string
		f    func(*Options) *string
	}{
		{"cpppath", func(o *Options) *string { return &o.CPPPath }},
		{"ldpath", func(o *Options) *string { return &o.LdPath }},
		{"ctfpath", func(o *Options) *string { return &o.CTFPath }},
		{"modpath", func(o *Options) *string { return &o.ModPath }},
		{"procfspath", func(o *Options) *string { return &o.ProcfsPath }},
	}
	for _, p := range paths {
		addOpt(&OptionSpec{Name: p.name, Kind: KindString, Class: ct, NoPragma: true, set: stringField(p.f)})
	}
	addOpt(&OptionSpec{Name: "stdc", Kind: KindEnum, Class: ct, NoPragma: true, Enum: []string{"a", "c", "s", "t"},
		set: stringField(func(o *Options) *string { return &o.Stdc })})
	strs := []struct {
		name string
		f    func(*Options) *string
	}{
		{"syslibdir", func(o *Options) *string { return &o.SysLibDir }},
		{"sysslice", func(o *Options) *string { return &o.SysSlice }},
		{"ctypes", func(o *Options) *string { return &o.CTypes }},
		{"dtypes", func(o *Options) *string { return &o.DTypes }},
		{"amin", func(o *Options) *string { return &o.Amin }},
	}
	for _, s := range strs {
		addOpt(&OptionSpec{Name: s.name, Kind: KindString, Class: ct, set: stringField(s.f)})
	}
	addOpt(&OptionSpec{Name: "libdir", Kind: KindString, Class: ct,
		set: func(o *Options, v optValue) error { o.LibDirs = append(o.LibDirs, v.Str); return nil }})
	addOpt(&OptionSpec{Name: "debugassert", Kind: KindEnum, Class: ct, Enum: []string{"mutexes"},
		set: stringField(func(o *Options) *string { return &o.DebugAssert })})
	addOpt(&OptionSpec{Name: "linkmode", Kind: KindEnum, Class: ct, Enum: []string{"kernel", "dynamic", "static"},
		set: stringField(func(o *Options) *string { return &o.LinkMode })})
	addOpt(&OptionSpec{Name: "linktype", Kind: KindString, Class: ct,
		set: func(o *Options, v optValue) error {
			switch strings.ToLower(v.Str) {
			case "elf", "dof":
				o.LinkType = strings.ToLower(v.Str)
				return nil
			}
			return ErrBadOptVal
		}})
	addOpt(&OptionSpec{Name: "late", Kind: KindEnum, Class: ct, Enum: []string{"dynamic", "static"},
		set: stringField(func(o *Options) *string { return &o.XlateMode })})
	addOpt(&OptionSpec{Name: "evaltime", Kind: KindEnum, Class: ct, Enum: []string{"exec", "preinit", "postinit", "main"},
		set: stringField(func(o *Options) *string { return &o.EvalTime })})
	addOpt(&OptionSpec{Name: "version", Kind: KindString, Class: ct,
		set: func(o *Options, v optValue) error {
			n, err := ParseVersion(v.Str)
			if err != nil {
				return err
			}
			o.Version, o.VersionNum = v.Str, n
			return nil
		}})
	// Integer compile-time options parsed with atoi, as libdtrace does.
	atoiOpt := func(name string, f func(*Options) *int64, check func(int64) error) {
		addOpt(&OptionSpec{Name: name, Kind: KindString, Class: ct,
			set: func(o *Options, v optValue) error {
				n := atoi(v.Str)
				if err := check(n); err != nil {
					return err
				}
				*f(o) = n
				return nil
			}})
	}
	positive := func(n int64) error {
		if n <= 0 {
			return ErrBadOptVal
		}
		return nil
	}
	nonNegative := func(n int64) error {
		if n < 0 {
			return ErrBadOptVal
		}
		return nil
	}
	atoiOpt("tree", func(o *Options) *int64 { return &o.Tree }, positive)
	atoiOpt("tregs", func(o *Options) *int64 { return &o.TRegs }, positive)
	atoiOpt("disasm", func(o *Options) *int64 { return &o.Disasm }, nonNegative)
	atoiOpt("useruid", func(o *Options) *int64 { return &o.UserUID }, nonNegative)
	atoiOpt("pgmax", func(o *Options) *int64 { return &o.PgMax }, nonNegative)
	atoiOpt("iregs", func(o *Options) *int64 { return &o.IRegs }, func(n int64) error {
		if n <= 0 || n > difRegisters {
			return ErrBadOptVal
		}
		if n < difRegisters {
			return ErrNoReg
		}
		return nil
	})
	addOpt(&OptionSpec{Name: "preallocate", Kind: KindSize, Class: ct,
		set: func(o *Options, v optValue) error {
			if !v.Present {
				return ErrBadOptVal
			}
			return nil
		}})

	// Run-time options.
	sizes := []struct {
		name string
		f    func(*Options) *int64
	}{
		{"aggsize", func(o *Options) *int64 { return &o.AggSize }},
		{"bpflogsize", func(o *Options) *int64 { return &o.BPFLogSize }},
		{"bufsize", func(o *Options) *int64 { return &o.BufSize }},
		{"dynvarsize", func(o *Options) *int64 { return &o.DynVarSize }},
		{"jstackstrsize", func(o *Options) *int64 { return &o.JStackStrSize }},
		{"specsize", func(o *Options) *int64 { return &o.SpecSize }},
	}
	for _, s := range sizes {
		addOpt(&OptionSpec{Name: s.name, Kind: KindSize, Class: rt, set: intField(s.f)})
	}
	addOpt(&OptionSpec{Name: "strsize", Kind: KindSize, Class: rt,
		set: func(o *Options, v optValue) error {
			n := int64(0)
			if v.Present {
				n = v.Int
			}
			// The smallest string must hold the two-byte null string.
			if n < 2 {
				return ErrBadOptVal
			}
			if n > 1<<32-1 {
				return ErrValueOverflow
			}
			o.StrSize = n
			return nil
		}})
	addOpt(&OptionSpec{Name: "scratchsize", Kind: KindSize, Class: rt,
		set: func(o *Options, v optValue) error {
			n := v.Int
			if !v.Present {
				n = 0
			}
			if n > 0 { // room for the length word, 8-byte aligned
				n = (n + 8 + 7) &^ 7
			}
			o.ScratchSize = n
			return nil
		}})
	addOpt(&OptionSpec{Name: "lockmem", Kind: KindString, Class: rt,
		set: func(o *Options, v optValue) error {
			if v.Str == "unlimited" {
				o.LockMem = 1<<63 - 1
				return nil
			}
			if n, err := ParseSize(v.Str); err == nil {
				o.LockMem = n
			}
			return nil
		}})
	addOpt(&OptionSpec{Name: "pcapsize", Kind: KindSize, Class: rt,
		set: func(o *Options, v optValue) error {
			n := int64(DefaultPcapSize)
			if v.Present && v.Int > 0 && v.Int <= 65535 {
				n = v.Int
			}
			o.PcapSize = (n + 7) &^ 7
			return nil
		}})
	addOpt(&OptionSpec{Name: "bufpolicy", Kind: KindEnum, Class: rt,
		Enum: []string{BufPolicyRing, BufPolicyFill, BufPolicySwitch},
		set:  stringField(func(o *Options) *string { return &o.BufPolicy })})
	addOpt(&OptionSpec{Name: "bufresize", Kind: KindEnum, Class: rt, Enum: []string{"auto", "manual"},
		set: stringField(func(o *Options) *string { return &o.BufResize })})
	addOpt(&OptionSpec{Name: "cleanrate", Kind: KindRate, Class: rt,
		set: intField(func(o *Options) *int64 { return &o.CleanRate })})
	addOpt(&OptionSpec{Name: "statusrate", Kind: KindRate, Class: rt,
		set: intField(func(o *Options) *int64 { return &o.StatusRate })})
	counts := []struct {
		name string
		f    func(*Options) *int64
	}{
		{"cpu", func(o *Options) *int64 { return &o.CPU }},
		{"jstackframes", func(o *Options) *int64 { return &o.JStackFrames }},
		{"maxframes", func(o *Options) *int64 { return &o.MaxFrames }},
		{"nspec", func(o *Options) *int64 { return &o.NSpec }},
		{"stackframes", func(o *Options) *int64 { return &o.StackFrames }},
		{"ustackframes", func(o *Options) *int64 { return &o.UStackFrames }},
	}
	for _, c := range counts {
		addOpt(&OptionSpec{Name: c.name, Kind: KindCount, Class: rt, set: intField(c.f)})
	}
	rtBools := []struct {
		name string
		f    func(*Options) *bool
	}{
		{"bpflog", func(o *Options) *bool { return &o.BPFLog }},
		{"destructive", func(o *Options) *bool { return &o.Destructive }},
		{"grabanon", func(o *Options) *bool { return &o.GrabAnon }},
		{"noresolve", func(o *Options) *bool { return &o.NoResolve }},
	}
	for _, b := range rtBools {
		addOpt(&OptionSpec{Name: b.name, Kind: KindBool, Class: rt, set: boolField(b.f)})
	}

	// Dynamic run-time options.
	addOpt(&OptionSpec{Name: "aggrate", Kind: KindRate, Class: drt,
		set: intField(func(o *Options) *int64 { return &o.AggRate })})
	addOpt(&OptionSpec{Name: "switchrate", Kind: KindRate, Class: drt,
		set: intField(func(o *Options) *int64 { return &o.SwitchRate })})
	addOpt(&OptionSpec{Name: "aggsortkeypos", Kind: KindCount, Class: drt,
		set: intField(func(o *Options) *int64 { return &o.AggSortKeyPos })})
	addOpt(&OptionSpec{Name: "aggsortpos", Kind: KindCount, Class: drt,
		set: intField(func(o *Options) *int64 { return &o.AggSortPos })})
	addOpt(&OptionSpec{Name: "printsize", Kind: KindSize, Class: drt,
		set: func(o *Options, v optValue) error {
			n := int64(DefaultPrintSize)
			if v.Present && v.Int > 0 && v.Int <= 65536 {
				n = v.Int
			}
			o.PrintSize = (n + 7) &^ 7
			return nil
		}})
	drtBools := []struct {
		name string
		f    func(*Options) *bool
	}{
		{"aggsortkey", func(o *Options) *bool { return &o.AggSortKey }},
		{"aggsortrev", func(o *Options) *bool { return &o.AggSortRev }},
		{"flowindent", func(o *Options) *bool { return &o.FlowIndent }},
		{"quiet", func(o *Options) *bool { return &o.Quiet }},
		{"quietresize", func(o *Options) *bool { return &o.QuietResize }},
		{"rawbytes", func(o *Options) *bool { return &o.RawBytes }},
		{"stackindent", func(o *Options) *bool { return &o.StackIndent }},
	}
	for _, b := range drtBools {
		addOpt(&OptionSpec{Name: b.name, Kind: KindBool, Class: drt, set: boolField(b.f)})
	}
	// Output format (illumos's structured output; ours adds json).
	addOpt(&OptionSpec{Name: "oformat", Kind: KindEnum, Class: ct, Enum: []string{"text", "json"},
		set: stringField(func(o *Options) *string { return &o.OFormat })})
}
