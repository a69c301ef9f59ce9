package dtrace

import (
	"errors"
	"maps"
	"strings"
)

// This file holds the Options type and its setters: what `-x name[=value]`,
// `#pragma D option name[=value]`, DTRACE_OPT_* environment variables and the
// setopt() action accept, with the defaults and error messages of
// illumos/Oracle dtrace. options_table.go lists the options, and
// options_values.go parses their values.

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
	// Solaris marks an option that only makes sense on Solaris: it is
	// accepted, for scripts written there, with a warning (Warnings).
	Solaris bool
	// Unsupported marks an option this implementation accepts, for
	// scripts written for other DTraces, but does not honour: it is
	// accepted with a warning naming it, never silently.
	Unsupported bool
	set         func(o *Options, v optValue) error
}

// optValue is a parsed option argument; Present is false for "-xname".
type optValue struct {
	Present bool
	Str     string
	Int     int64 // for bool/count/size/rate kinds
}

// The bits of the disasm option, which selects what -S lists
// (dtrace-utils' DT_DISASM_OPT_*): each clause (the default), and each
// probe program as built, linked and loaded (loader.Stage; disasm.go).
const (
	DisasmClause  = 1
	DisasmProgram = 2
	DisasmLinked  = 4
	DisasmFinal   = 8
	disasmDefault = DisasmClause
)

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
	DefaultPcapSize   = 1514
	DefaultFlowSize   = 65536
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
	// FlowSize is the number of entries of each flow variable table
	// (beyond DTrace; docs/FLOW.md).
	FlowSize int64
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
	AggHist, AggPack, AggZoom, Temporal                   bool
	// UStackFP walks user stacks by frame pointers only (beyond
	// DTrace: -x ustackfp; the default unwinds by call-frame
	// information, docs/STACKS.md).
	UStackFP bool

	// Compiler flags. Verbose is the "verbose" option, set by -S: print
	// the compiled code (not -v, which the command handles itself).
	ArgRef, CPP, DefaultArgs, Empty, ErrTags, DropTags bool
	KNoDefs, UNoDefs, NoLibs, PSpec, ZDefs, Verbose    bool
	Strip, Debug, LazyLoad, LinkNoMmap, Core           bool

	// Enumerations.
	BufPolicy, BufResize, LinkMode, LinkType, XlateMode, EvalTime string
	// Encoding is "ascii", "utf8" or "" (not set: packed aggregations
	// use UTF-8 unless the terminal is a primitive one).
	Encoding string
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
	// ProcEnv is the environment of the processes -c creates, as
	// setenv and unsetenv leave it; nil when neither was set (they
	// inherit dtrace's own).
	ProcEnv []string
	// Outputs holds the values of the options of the output formats
	// other than oformat, by option name: the files written at exit
	// (pprof, flamegraph), the address served (prometheus), the
	// receiver exported to (otlp; "" for the environment's) and those
	// formats' further options (promlabels, otlpspans); a format is on
	// when its option is present. See package output/formats.
	Outputs map[string]string
	// Agent is the device a guest's agent serves the host over (-x
	// agent=/dev/virtio-ports/NAME); Guests the guests a host traces
	// too, each NAME=SOCKET (-x guest=, repeatable). See package agent.
	Agent  string
	Guests []string
	// CPPArgs are extra preprocessor arguments in command-line order:
	// -D, -U, -I (from -D/-U/-I, -xdefine, -xundef, -xincdir), -H (cpphdrs)
	// and the words of -xcppargs.
	CPPArgs []string

	set      map[string]bool
	warnings []string
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
		FlowSize:      DefaultFlowSize,
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
		EvalTime:      "", // unset: dtrace-utils' postinit, quietly (evaltime_linux.go)
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
// os.Environ), ignoring bad ones as dtrace does, and DTRACE_DEBUG (any
// value but the empty one turns the debug option on).
func (o *Options) SetEnv(environ []string) {
	const prefix = "DTRACE_OPT_"
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if k == "DTRACE_DEBUG" && v != "" {
			// libdtrace's own switch for its debugging output.
			o.Debug = true
			continue
		}
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
	if o.ProcEnv != nil {
		c.ProcEnv = append([]string(nil), o.ProcEnv...)
	}
	c.Outputs = maps.Clone(o.Outputs)
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
	if spec.Solaris {
		o.warnSolaris(name)
	} else if spec.Unsupported {
		o.warnings = append(o.warnings, "option "+name+" is not supported and is ignored")
	}
	return nil
}

// warnSolaris warns that option name, as set, only makes sense on
// Solaris.
func (o *Options) warnSolaris(name string) {
	o.warnings = append(o.warnings, "option "+name+" only has meaning on Solaris and is ignored")
}

// Warnings returns, once each, the warnings of the options set since the
// last call (options that only make sense on Solaris or that are not
// supported), for printing
// after "dtrace: ".
func (o *Options) Warnings() []string {
	w := o.warnings
	o.warnings = nil
	return w
}
