package dtrace

import (
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/dtrace-go/dtrace/internal/cnum"
)

// This file and options_runtime.go are the option table: every option
// dtrace knows, its kind, class and the field it sets.

// LookupOption returns the description of the option called name.
func LookupOption(name string) (*OptionSpec, bool) {
	buildOptionTable()
	s, ok := optionTable[name]
	return s, ok
}

// OptionNames lists every option name, sorted.
func OptionNames() []string {
	buildOptionTable()
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

// difRegisters is DIF_DIR_NREGS, the only value iregs accepts.
const difRegisters = 8

// optionTable is built when an option is first looked up (a run that
// sets none does not build it: some 200 entries, their setters found by
// reflection).
var optionTable map[string]*OptionSpec

var buildOptionTable = sync.OnceFunc(func() {
	optionTable = map[string]*OptionSpec{}
	addOptions()
})

func addOpt(s *OptionSpec) { optionTable[s.Name] = s }

// addFields adds an option like spec for each option name in fields, set
// by set through the Options field fields names for it.
func addFields[T any](set func(func(*Options) *T) func(*Options, optValue) error, spec OptionSpec, fields map[string]string) {
	for name, field := range fields {
		s := spec
		s.Name, s.set = name, set(optionsField[T](field))
		addOpt(&s)
	}
}

// optionsField returns the address of the field name of an Options; an
// Options without a field of that name and type is a mistake in the
// table, and panics when the table is built (the first lookup of an
// option; the tests look options up).
func optionsField[T any](name string) func(*Options) *T {
	f, ok := reflect.TypeFor[Options]().FieldByName(name)
	if !ok || f.Type != reflect.TypeFor[T]() {
		panic("dtrace: Options has no field " + name + " of type " + reflect.TypeFor[T]().String())
	}
	return func(o *Options) *T { return reflect.ValueOf(o).Elem().FieldByIndex(f.Index).Addr().Interface().(*T) }
}

// addOptions fills optionTable.
func addOptions() {
	addCompileFlags()
	addCompileValues()
	addAtoiOptions()
	addRunTimeOptions()
	addRunTimeSettings()
	addDynamicOptions()
	addOutputOptions()
	// Solaris's own: zones, lazy loading of USDT providers by a
	// Solaris linker feature, the run-time linker's mmap, page limits
	// of its kernel, and its /proc. Accepted with a warning.
	addOpt(&OptionSpec{Name: "zone", Kind: KindString, Class: RunTime,
		set: func(*Options, optValue) error { return nil }})
	// grabanon claims the anonymous enablings Solaris's driver kept
	// from boot; modpath is the module search path of Solaris's linker.
	for _, name := range []string{"zone", "lazyload", "linknommap", "pgmax", "procfspath", "grabanon", "modpath"} {
		optionTable[name].Solaris = true
	}
	// Options of illumos and dtrace-utils this implementation does not
	// honour: jstack()'s sizes (no such action
	// here), systemd slices and the uid of dtrace-utils'
	// helper, user symbol checks (user symbols are not resolved when
	// compiling). The rest are honoured: disasm (-S's listings:
	// disasm.go), strip and linktype (-G's DOF:
	// without its comment and utsname, raw or in an ELF object;
	// dofgen.go), tree (tree.go), iregs (only DIF's 8), linkmode and
	// kdefs/knodefs (codegen's SymbolLink), evaltime (process.go),
	// noresolve (the symbolizer), ctypes and dtypes (the C and D type
	// containers written in CTF: ctftypes.go), debug (progress lines on stderr, in
	// libdtrace's form), core (cmd/dtrace dumps core as it exits),
	// statusrate (the consumer), ctfpath (kernel types come from BTF: an
	// archive it names is checked as dtrace-utils opens it, and -x debug
	// says whether it opens; ctftypes.go) and cleanrate (clamped to illumos's
	// bounds: dynamic variables are deleted when 0 is stored, nothing
	// needs cleaning periodically). Accepted silently, as their effect is
	// already ours: unodefs (permit unresolved user symbols: they are
	// resolved when the
	// program runs, never when it is compiled) and debugassert (checks
	// of libdtrace's own locks, which runtest.sh sets for every test).
	for _, name := range []string{"useruid", "sysslice",
		"jstackframes", "jstackstrsize", "syslibdir",
		"udefs", "late"} {
		optionTable[name].Unsupported = true
	}
}

// addCompileFlags adds the compile-time flags.
func addCompileFlags() {
	ct := CompileTime
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

}

// addCompileValues adds the compile-time options that take a value.
func addCompileValues() {
	ct := CompileTime
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
	addFields(stringField, OptionSpec{Kind: KindString, Class: ct, NoPragma: true}, map[string]string{
		"cpppath":    "CPPPath",
		"ldpath":     "LdPath",
		"ctfpath":    "CTFPath",
		"modpath":    "ModPath",
		"procfspath": "ProcfsPath",
	})
	addOpt(&OptionSpec{Name: "stdc", Kind: KindEnum, Class: ct, NoPragma: true, Enum: []string{"a", "c", "s", "t"},
		set: stringField(func(o *Options) *string { return &o.Stdc })})
	addFields(stringField, OptionSpec{Kind: KindString, Class: ct}, map[string]string{
		"syslibdir": "SysLibDir",
		"sysslice":  "SysSlice",
		"ctypes":    "CTypes",
		"dtypes":    "DTypes",
		"amin":      "Amin",
	})
	// The environment of -c commands: "setenv=NAME=value" and
	// "unsetenv=NAME", command line only as in illumos (the processes
	// exist before a program's pragmas are read).
	addOpt(&OptionSpec{Name: "setenv", Kind: KindString, Class: ct, NoPragma: true,
		set: func(o *Options, v optValue) error {
			name, _, ok := strings.Cut(v.Str, "=")
			if !ok || name == "" {
				return ErrBadOptVal
			}
			o.ProcEnv = append(withoutEnv(o.ProcEnv, name), v.Str)
			return nil
		}})
	addOpt(&OptionSpec{Name: "unsetenv", Kind: KindString, Class: ct, NoPragma: true,
		set: func(o *Options, v optValue) error {
			if v.Str == "" || strings.Contains(v.Str, "=") {
				return ErrBadOptVal
			}
			o.ProcEnv = withoutEnv(o.ProcEnv, v.Str)
			return nil
		}})
	addOpt(&OptionSpec{Name: "libdir", Kind: KindString, Class: ct,
		set: func(o *Options, v optValue) error { o.LibDirs = append(o.LibDirs, v.Str); return nil }})
	addOpt(&OptionSpec{Name: "debugassert", Kind: KindEnum, Class: ct, Enum: []string{"mutexes"},
		set: stringField(func(o *Options) *string { return &o.DebugAssert })})
	addOpt(&OptionSpec{Name: "linkmode", Kind: KindEnum, Class: ct, Enum: []string{"kernel", "primary", "dynamic", "static"},
		set: stringField(func(o *Options) *string { return &o.LinkMode })})
	addOpt(&OptionSpec{Name: "linktype", Kind: KindString, Class: ct,
		set: func(o *Options, v optValue) error {
			// -G writes its DOF in an ELF object's .SUNW_dof
			// section (elf) or as a file of its own (dof).
			switch strings.ToLower(v.Str) {
			case "elf", "dof":
			default:
				return ErrBadOptVal
			}
			o.LinkType = strings.ToLower(v.Str)
			return nil
		}})
	addOpt(&OptionSpec{Name: "late", Kind: KindEnum, Class: ct, Enum: []string{"dynamic", "static"},
		set: stringField(func(o *Options) *string { return &o.XlateMode })})
	addOpt(&OptionSpec{Name: "encoding", Kind: KindEnum, Class: ct, Enum: []string{"ascii", "utf8"},
		set: stringField(func(o *Options) *string { return &o.Encoding })})
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
}

// addAtoiOptions adds the integer compile-time options that libdtrace
// parses with atoi.
func addAtoiOptions() {
	ct := CompileTime
	atoiOpt := func(name string, f func(*Options) *int64, check func(int64) error) {
		addOpt(&OptionSpec{Name: name, Kind: KindString, Class: ct,
			set: func(o *Options, v optValue) error {
				n := cnum.Atol(v.Str)
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
}
