package dtrace

import (
	"errors"
	"reflect"
	"testing"

	"github.com/dtrace-go/dtrace/codegen"
)

func TestOptionsSet(t *testing.T) {
	tests := []struct {
		arg   string // as given to -x
		err   error
		check func(o *Options) bool
	}{
		{"bufsize=4m", nil, func(o *Options) bool { return o.BufSize == 4<<20 }},
		{"bufsize=64", nil, func(o *Options) bool { return o.BufSize == 64 }},
		{"bufsize=2G", nil, func(o *Options) bool { return o.BufSize == 2<<30 }},
		{"bufsize=1t", nil, func(o *Options) bool { return o.BufSize == 1<<40 }},
		{"bufsize=0x10k", nil, func(o *Options) bool { return o.BufSize == 16<<10 }},
		{"bufsize=-1", ErrBadOptVal, nil},
		{"bufsize=12q", ErrBadOptVal, nil},
		{"bufsize=k", ErrBadOptVal, nil},
		{"specsize=1b", ErrBadOptVal, nil},
		{"strsize=1", ErrBadOptVal, nil},
		{"strsize=2", nil, func(o *Options) bool { return o.StrSize == 2 }},
		{"strsize=2k", nil, func(o *Options) bool { return o.StrSize == 2048 }},
		{"switchrate=1s", nil, func(o *Options) bool { return o.SwitchRate == 1e9 }},
		{"switchrate=100hz", nil, func(o *Options) bool { return o.SwitchRate == 1e7 }},
		{"switchrate=500msec", nil, func(o *Options) bool { return o.SwitchRate == 5e8 }},
		{"aggrate=1ms", nil, func(o *Options) bool { return o.AggRate == 1e6 }},
		{"statusrate=10sec", nil, func(o *Options) bool { return o.StatusRate == 1e10 }},
		{"cleanrate=3000HZ", nil, func(o *Options) bool { return o.CleanRate == 333333 }},
		{"cleanrate=5000hz", nil, func(o *Options) bool { return o.CleanRate == 200000 }},
		{"cleanrate=1min", nil, func(o *Options) bool { return o.CleanRate == 60e9 }},
		// illumos's kernel clamps cleanrate to 200us..1min (0 is a
		// minute) and statusrate to at most 10s.
		{"cleanrate=5001hz", nil, func(o *Options) bool { return o.CleanRate == 200000 }},
		{"cleanrate=3000", nil, func(o *Options) bool { return o.CleanRate == 200000 }},
		{"cleanrate=2000hz", nil, func(o *Options) bool { return o.CleanRate == 500000 }},
		{"cleanrate=50ms", nil, func(o *Options) bool { return o.CleanRate == 5e7 }},
		{"cleanrate=61s", nil, func(o *Options) bool { return o.CleanRate == 60e9 }},
		{"cleanrate", nil, func(o *Options) bool { return o.CleanRate == 60e9 }},
		{"cleanrate=0", nil, func(o *Options) bool { return o.CleanRate == 60e9 }},
		{"cleanrate=5parsecs", ErrBadOptVal, nil},
		{"statusrate=10ms", nil, func(o *Options) bool { return o.StatusRate == 1e7 }},
		{"statusrate=11s", nil, func(o *Options) bool { return o.StatusRate == 1e10 }},
		{"statusrate=10parsecs", ErrBadOptVal, nil},
		{"switchrate=5", nil, func(o *Options) bool { return o.SwitchRate == 5 }},
		{"switchrate=5parsecs", ErrBadOptVal, nil},
		{"quiet", nil, func(o *Options) bool { return o.Quiet }},
		{"quiet=no", nil, func(o *Options) bool { return !o.Quiet }},
		{"quiet=", nil, func(o *Options) bool { return !o.Quiet }},
		{"quiet=ON", nil, func(o *Options) bool { return o.Quiet }},
		{"quiet=0", nil, func(o *Options) bool { return o.Quiet }}, // 0 is "set", as in dtrace
		{"quiet=maybe", ErrBadOptVal, nil},
		{"flowindent", nil, func(o *Options) bool { return o.FlowIndent }},
		{"nspec=8", nil, func(o *Options) bool { return o.NSpec == 8 }},
		{"nspec=-1", ErrBadOptVal, nil},
		{"bufpolicy=ring", nil, func(o *Options) bool { return o.BufPolicy == BufPolicyRing }},
		{"bufpolicy=fill", nil, func(o *Options) bool { return o.BufPolicy == BufPolicyFill }},
		{"bufpolicy=circle", ErrBadOptVal, nil},
		{"bufpolicy", ErrBadOptVal, nil},
		{"zdefs", nil, func(o *Options) bool { return o.ZDefs }},
		{"zdefs=1", ErrBadOptVal, nil},
		{"errtags", nil, func(o *Options) bool { return o.ErrTags }},
		{"droptags", nil, func(o *Options) bool { return o.DropTags }},
		{"kdefs", nil, func(o *Options) bool { return !o.KNoDefs }},
		{"cpp", nil, func(o *Options) bool { return o.CPP }},
		{"define=probe=BEGIN", nil, func(o *Options) bool { return reflect.DeepEqual(o.CPPArgs, []string{"-Dprobe=BEGIN"}) }},
		{"undef=__linux", nil, func(o *Options) bool { return reflect.DeepEqual(o.CPPArgs, []string{"-U__linux"}) }},
		{"incdir=/tmp", nil, func(o *Options) bool { return reflect.DeepEqual(o.CPPArgs, []string{"-I/tmp"}) }},
		{"cppargs=-Da  -Ub", nil, func(o *Options) bool { return reflect.DeepEqual(o.CPPArgs, []string{"-Da", "-Ub"}) }},
		{"stdc=s", nil, func(o *Options) bool { return o.Stdc == "s" }},
		{"stdc=X", ErrBadOptVal, nil},
		{"version=1.1", nil, func(o *Options) bool { return o.VersionNum == 1<<24|1<<12 }},
		{"version=2.0", nil, func(o *Options) bool { return o.VersionNum == 2<<24 }},
		{"version=99.1", ErrVersUndef, nil},
		{"version=1.x", ErrVersInval, nil},
		{"linkmode=dynamic", nil, func(o *Options) bool { return o.LinkMode == "dynamic" }},
		{"linkmode=wild", ErrBadOptVal, nil},
		{"linkmode=primary", nil, func(o *Options) bool { return o.symbolLink() == codegen.LinkPrimary }},
		{"linkmode=dynamic", nil, func(o *Options) bool { return o.symbolLink() == codegen.LinkDynamic }},
		{"linkmode=static", nil, func(o *Options) bool { return o.symbolLink() == codegen.LinkStatic }},
		{"knodefs", nil, func(o *Options) bool { return o.KNoDefs && o.symbolLink() == codegen.LinkStatic }},
		{"linktype=coff", ErrBadOptVal, nil},
		{"evaltime=preinit", nil, func(o *Options) bool { return o.EvalTime == "preinit" }},
		{"evaltime=later", ErrBadOptVal, nil},
		{"evaltime", ErrBadOptVal, nil},
		{"noresolve", nil, func(o *Options) bool { return o.NoResolve }},
		{"tree=-1", ErrBadOptVal, nil},
		{"linktype=DOF", nil, func(o *Options) bool { return o.LinkType == "dof" }},
		{"tree=4", nil, func(o *Options) bool { return o.Tree == 4 }},
		{"tree=0", ErrBadOptVal, nil},
		{"iregs=9", ErrBadOptVal, nil},
		{"iregs=4", ErrNoReg, nil},
		{"iregs=8", nil, func(o *Options) bool { return o.IRegs == 8 }},
		{"scratchsize=9", nil, func(o *Options) bool { return o.ScratchSize == 24 }},
		{"destructive", nil, func(o *Options) bool { return o.Destructive }},
		{"aggsortkeypos=1", nil, func(o *Options) bool { return o.AggSortKeyPos == 1 }},
		{"lockmem=unlimited", nil, func(o *Options) bool { return o.LockMem > 1<<60 }},
		{"oformat=json", nil, func(o *Options) bool { return o.OFormat == "json" }},
		{"aggpack", nil, func(o *Options) bool { return o.AggPack }},
		{"aggpack=off", nil, func(o *Options) bool { return !o.AggPack }},
		{"aggpack=sometimes", ErrBadOptVal, nil},
		{"agghist=yes", nil, func(o *Options) bool { return o.AggHist }},
		{"aggzoom=true", nil, func(o *Options) bool { return o.AggZoom }},
		{"encoding=utf8", nil, func(o *Options) bool { return o.Encoding == "utf8" }},
		{"encoding=ascii", nil, func(o *Options) bool { return o.Encoding == "ascii" }},
		{"encoding=ebcdic", ErrBadOptVal, nil},
		{"encoding", ErrBadOptVal, nil},
		{"nosuchoption", ErrBadOptName, nil},
		{"", ErrBadOptName, nil},
	}
	for _, tt := range tests {
		o := NewOptions()
		err := o.SetArg(tt.arg)
		if !errors.Is(err, tt.err) {
			t.Errorf("-x %s: error %v, want %v", tt.arg, err, tt.err)
			continue
		}
		if tt.check != nil && !tt.check(o) {
			t.Errorf("-x %s: options not as expected: %+v", tt.arg, o)
		}
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := NewOptions()
	if o.BufSize != 4<<20 || o.AggSize != 4<<20 || o.StrSize != 256 || o.NSpec != 1 ||
		o.SwitchRate != 1e9 || o.AggRate != 1e9 || o.BufPolicy != "switch" || o.Quiet {
		t.Errorf("bad defaults: %+v", o)
	}
	if o.IsSet("bufsize") {
		t.Errorf("bufsize reported as set by default")
	}
	_ = o.Set("bufsize", "1m")
	if !o.IsSet("bufsize") {
		t.Errorf("bufsize not reported as set")
	}
}

func TestOptionsPragma(t *testing.T) {
	tests := []struct {
		name, value string
		has         bool
		err         error
	}{
		{"quiet", "", false, nil},
		{"ldpath", "/nonexistent/directory", true, ErrBadOptCtx},
		{"modpath", "/nonexistent/directory", true, ErrBadOptCtx},
		{"define", "X=1", true, ErrBadOptCtx},
		{"iregs", "9", true, ErrBadOptVal},
		{"strsize", "14", true, nil},
		{"bogus", "", false, ErrBadOptName},
		{"cleanrate", "1ns", true, nil}, // clamped, as illumos's kernel does
		{"statusrate", "1h", true, nil},
		{"cleanrate", "1parsec", true, ErrBadOptVal},
		{"linkmode", "primary", true, nil},
	}
	for _, tt := range tests {
		err := NewOptions().SetPragma(tt.name, tt.value, tt.has)
		if !errors.Is(err, tt.err) {
			t.Errorf("pragma %s=%s: error %v, want %v", tt.name, tt.value, err, tt.err)
		}
	}
}

func TestCheckSetopt(t *testing.T) {
	o := NewOptions()
	if err := o.CheckSetopt("quiet", "", false); err != nil {
		t.Errorf("setopt quiet: %v", err)
	}
	if err := o.CheckSetopt("bufsize", "1m", true); !errors.Is(err, ErrActive) {
		t.Errorf("setopt bufsize: %v, want ErrActive", err)
	}
	// The aggregation layout options change while tracing, as in illumos.
	for _, n := range []string{"aggpack", "agghist", "aggzoom"} {
		if err := o.CheckSetopt(n, "", false); err != nil {
			t.Errorf("setopt %s: %v", n, err)
		}
	}
	if err := o.CheckSetopt("nonsense", "", false); !errors.Is(err, ErrBadOptName) {
		t.Errorf("setopt nonsense: %v", err)
	}
	if o.Quiet || o.AggPack {
		t.Errorf("CheckSetopt changed the options")
	}
}

func TestSetEnv(t *testing.T) {
	o := NewOptions()
	o.SetEnv([]string{"DTRACE_OPT_CPPARGS=-fno-show-column -P", "DTRACE_OPT_BUFSIZE=junk", "HOME=/root", "DTRACE_OPT_NOPE=1"})
	if !reflect.DeepEqual(o.CPPArgs, []string{"-fno-show-column", "-P"}) {
		t.Errorf("CPPArgs = %q", o.CPPArgs)
	}
	if o.BufSize != DefaultBufSize {
		t.Errorf("bad env value changed bufsize to %d", o.BufSize)
	}
}

func TestFormatSize(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{4 << 20, "4m"}, {512 << 10, "512k"}, {3 << 30, "3g"}, {1000, "1000 bytes"}, {1536 << 10, "1536k"},
	}
	for _, tt := range tests {
		if got := FormatSize(tt.n); got != tt.want {
			t.Errorf("FormatSize(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestOptionNamesKnown(t *testing.T) {
	for _, n := range []string{"bufsize", "aggsize", "strsize", "nspec", "specsize", "dynvarsize",
		"switchrate", "aggrate", "quiet", "flowindent", "rawbytes", "defaultargs", "errtags",
		"droptags", "bufpolicy", "aggsortkey", "aggsortrev", "aggsortpos", "aggsortkeypos",
		"destructive", "zdefs", "cpp", "define", "undef", "incdir", "version", "linkmode",
		"stdc", "tree", "strip", "empty", "argref"} {
		if _, ok := LookupOption(n); !ok {
			t.Errorf("option %q missing", n)
		}
	}
	if len(OptionNames()) < 60 {
		t.Errorf("only %d options", len(OptionNames()))
	}
}

// Packed bars are Unicode unless encoding=ascii or TERM is unset or names
// a primitive terminal; histogram bars only with encoding=utf8.
func TestAggView(t *testing.T) {
	for _, c := range []struct {
		enc, term      string
		packUTF8, utf8 bool
	}{
		{"", "xterm-256color", true, false},
		{"", "dumb", false, false},
		{"", "sun-color", false, false},
		{"", "", false, false},
		{"ascii", "xterm", false, false},
		{"utf8", "dumb", true, true},
	} {
		t.Setenv("TERM", c.term)
		o := NewOptions()
		if c.enc != "" {
			if err := o.Set("encoding", c.enc); err != nil {
				t.Fatal(err)
			}
		}
		if v := o.aggView(); v.PackUTF8 != c.packUTF8 || v.UTF8 != c.utf8 {
			t.Errorf("encoding=%q TERM=%q: %+v", c.enc, c.term, v)
		}
	}
}

// TestOptionWarnings checks that options not honoured here warn when set,
// and that those corpus tests set without a warning stay silent.
func TestOptionWarnings(t *testing.T) {
	tests := []struct{ arg, warning string }{
		{"grabanon", "option grabanon only has meaning on Solaris and is ignored"},
		{"ctfpath=/dev/null", ""},
		{"jstackstrsize=1k", "option jstackstrsize is not supported and is ignored"},
		{"pcapsize=128", ""},
		{"udefs", "option udefs is not supported and is ignored"},
		{"late=static", "option late is not supported and is ignored"},
		{"modpath=/kernel", "option modpath only has meaning on Solaris and is ignored"},
		{"linktype=dof", ""},
		{"strip", ""},
		{"linktype=elf", ""},
		{"linkmode=dynamic", ""},
		{"cleanrate=50hz", ""},
		{"iregs=8", ""},
		{"nolibs", ""},
		{"lockmem=1m", ""},
		{"bpflog", ""},
		{"bpflogsize=1m", ""},
		{"tree=1", ""},
		{"evaltime=main", ""},
		{"noresolve", ""},
		{"statusrate=1s", ""},
		{"knodefs", ""},
	}
	for _, tt := range tests {
		o := NewOptions()
		if err := o.SetArg(tt.arg); err != nil {
			t.Fatalf("%s: %v", tt.arg, err)
		}
		w := o.Warnings()
		if tt.warning == "" && len(w) != 0 || tt.warning != "" && (len(w) != 1 || w[0] != tt.warning) {
			t.Errorf("%s: warnings %q, want %q", tt.arg, w, tt.warning)
		}
		if w := o.Warnings(); len(w) != 0 {
			t.Errorf("%s: warnings repeated: %q", tt.arg, w)
		}
	}
}

func TestVerifierLogSize(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want uint32
	}{{Unset, 0}, {0, 0}, {4096, 4096}, {1 << 40, (1<<32 - 1) >> 2}} {
		if got := verifierLogSize(tt.n); got != tt.want {
			t.Errorf("verifierLogSize(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

// TestSymbolLinkOptions checks how linkmode and knodefs combine, in
// either order: knodefs lets kernel symbols be compiled in whatever the
// mode, kdefs takes that back.
func TestSymbolLinkOptions(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want codegen.SymbolLink
	}{
		{nil, codegen.LinkStatic},
		{[]string{"linkmode=dynamic"}, codegen.LinkDynamic},
		{[]string{"linkmode=dynamic", "knodefs"}, codegen.LinkStatic},
		{[]string{"knodefs", "linkmode=dynamic"}, codegen.LinkStatic},
		{[]string{"linkmode=dynamic", "knodefs", "kdefs"}, codegen.LinkDynamic},
		{[]string{"linkmode=primary"}, codegen.LinkPrimary},
		{[]string{"linkmode=kernel"}, codegen.LinkStatic},
	} {
		o := NewOptions()
		for _, a := range tt.args {
			if err := o.SetArg(a); err != nil {
				t.Fatalf("%s: %v", a, err)
			}
		}
		if got := o.symbolLink(); got != tt.want {
			t.Errorf("%q: link %d, want %d", tt.args, got, tt.want)
		}
	}
}
