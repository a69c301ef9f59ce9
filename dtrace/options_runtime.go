package dtrace

// The run-time part of the option table (options_table.go): sizes,
// policies and rates fixed once tracing is active, the options setopt()
// may change, and those that choose output.

import (
	"fmt"
	"os"
	"strings"

	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/formats"
)

// addRunTimeOptions adds the sizes fixed once tracing is active.
func addRunTimeOptions() {
	rt := RunTime
	addFields(intField, OptionSpec{Kind: KindSize, Class: rt}, map[string]string{
		"aggsize":       "AggSize",
		"bpflogsize":    "BPFLogSize",
		"bufsize":       "BufSize",
		"dynvarsize":    "DynVarSize",
		"flowsize":      "FlowSize",
		"jstackstrsize": "JStackStrSize",
		"specsize":      "SpecSize",
	})
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
	addOpt(&OptionSpec{Name: "lockmem", Kind: KindString, Class: rt, NoPragma: true,
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
		set: alignedSize(DefaultPcapSize, 65535, func(o *Options) *int64 { return &o.PcapSize })})
}

// addRunTimeSettings adds the run-time policies, rates, counts and
// toggles.
func addRunTimeSettings() {
	rt := RunTime
	addOpt(&OptionSpec{Name: "bufpolicy", Kind: KindEnum, Class: rt,
		Enum: []string{BufPolicyRing, BufPolicyFill, BufPolicySwitch},
		set:  stringField(func(o *Options) *string { return &o.BufPolicy })})
	addOpt(&OptionSpec{Name: "bufresize", Kind: KindEnum, Class: rt, Enum: []string{"auto", "manual"},
		set: stringField(func(o *Options) *string { return &o.BufResize })})
	// illumos's bounds, to which its kernel clamps other values
	// silently (dtrace_state_go): cleanrate from 200us (5000hz) to a
	// minute, 0 meaning a minute; statusrate at most 10s.
	addOpt(&OptionSpec{Name: "cleanrate", Kind: KindRate, Class: rt,
		set: clampedField(func(o *Options) *int64 { return &o.CleanRate }, maxCleanRate, minCleanRate, maxCleanRate)})
	addOpt(&OptionSpec{Name: "statusrate", Kind: KindRate, Class: rt,
		set: clampedField(func(o *Options) *int64 { return &o.StatusRate }, 0, 0, maxStatusRate)})
	addFields(intField, OptionSpec{Kind: KindCount, Class: rt}, map[string]string{
		"cpu":          "CPU",
		"jstackframes": "JStackFrames",
		"maxframes":    "MaxFrames",
		"nspec":        "NSpec",
		"stackframes":  "StackFrames",
		"ustackframes": "UStackFrames",
	})
	addFields(boolField, OptionSpec{Kind: KindBool, Class: rt}, map[string]string{
		"bpflog":      "BPFLog",
		"destructive": "Destructive",
		"grabanon":    "GrabAnon",
		"noresolve":   "NoResolve",
		"temporal":    "Temporal",
		"ustackfp":    "UStackFP",
	})
}

// addDynamicOptions adds the options setopt() may change while tracing.
func addDynamicOptions() {
	drt := DynamicRunTime
	addFields(intField, OptionSpec{Kind: KindRate, Class: drt}, map[string]string{
		"aggrate":    "AggRate",
		"switchrate": "SwitchRate",
	})
	addFields(intField, OptionSpec{Kind: KindCount, Class: drt}, map[string]string{
		"aggsortkeypos": "AggSortKeyPos",
		"aggsortpos":    "AggSortPos",
	})
	addOpt(&OptionSpec{Name: "printsize", Kind: KindSize, Class: drt,
		set: alignedSize(DefaultPrintSize, 65536, func(o *Options) *int64 { return &o.PrintSize })})
	addFields(boolField, OptionSpec{Kind: KindBool, Class: drt}, map[string]string{
		"agghist":     "AggHist",
		"aggpack":     "AggPack",
		"aggsortkey":  "AggSortKey",
		"aggsortrev":  "AggSortRev",
		"aggzoom":     "AggZoom",
		"flowindent":  "FlowIndent",
		"quiet":       "Quiet",
		"quietresize": "QuietResize",
		"rawbytes":    "RawBytes",
		"stackindent": "StackIndent",
	})
}

// addOutputOptions adds the options that choose output besides
// dtrace(1M)'s text. Their values are checked here, at start-up, so that
// a bad one stops dtrace before anything is compiled or attached.
func addOutputOptions() {
	ct := CompileTime
	// Output format: dtrace(1M)'s text, JSON Lines, folded stacks, a
	// trace-event timeline.
	addOpt(&OptionSpec{Name: "oformat", Kind: KindEnum, Class: ct, Enum: formats.Names(),
		set: stringField(func(o *Options) *string { return &o.OFormat })})
	for _, f := range formats.All() {
		if f.When == output.Streaming {
			continue
		}
		for _, name := range append([]string{f.Option}, f.Params...) {
			kind := KindString
			if name == f.Option && f.Bare {
				kind = KindAny // -x otlp alone
			}
			addOpt(&OptionSpec{Name: name, Kind: kind, Class: ct, set: formatOption(f, name)})
		}
	}
	// Beyond DTrace: a host traces its guests through their agents.
	addOpt(&OptionSpec{Name: "agent", Kind: KindString, Class: ct, NoPragma: true,
		set: stringField(func(o *Options) *string { return &o.Agent })})
	addOpt(&OptionSpec{Name: "guest", Kind: KindString, Class: ct, NoPragma: true,
		set: func(o *Options, v optValue) error {
			name, sock, ok := strings.Cut(v.Str, "=")
			if !ok || name == "" || sock == "" || name == "host" || strings.ContainsAny(name, " \t") {
				return ErrBadOptVal
			}
			o.Guests = append(o.Guests, v.Str)
			return nil
		}})
}

// Bounds of the cleanrate and statusrate options (ns), illumos's.
const (
	minCleanRate  = 200_000
	maxCleanRate  = 60_000_000_000
	maxStatusRate = 10_000_000_000
)

// clampedField sets an integer option ("-xname" alone is 0) to its
// value clamped to [lo, hi], 0 standing for zero.
func clampedField(f func(*Options) *int64, zero, lo, hi int64) func(*Options, optValue) error {
	return func(o *Options, v optValue) error {
		n := int64(0)
		if v.Present {
			n = v.Int
		}
		if n == 0 {
			n = zero
		}
		*f(o) = min(max(n, lo), hi)
		return nil
	}
}

// CheckOutputs checks what no single output option can check alone (each
// format's output.Format.Verify): that -x prometheus names a loopback
// address unless -x promwebconfig gives a web configuration, that -x
// otlp's endpoints resolve with the environment. Its error says which
// option it refuses ("-x prometheus: ..."), for "failed to set".
func (o *Options) CheckOutputs() error {
	for _, f := range o.outputsOn() {
		if f.Verify == nil {
			continue
		}
		if err := f.Verify(o.Outputs[f.Option], o.outputParam); err != nil {
			return fmt.Errorf("-x %s: %v", f.Option, err)
		}
	}
	return nil
}

// formatOption sets option name of output format f, once its value
// passes the format's check and, for the file an AtExit format writes,
// once the file is known to be writable (it is created if missing, not
// truncated).
func formatOption(f *output.Format, name string) func(*Options, optValue) error {
	return func(o *Options, v optValue) error {
		if f.Check != nil && f.Check(name, v.Str) != nil {
			return ErrBadOptVal
		}
		if f.When == output.AtExit && name == f.Option && !creatable(v.Str) {
			return ErrBadOptVal
		}
		if o.Outputs == nil {
			o.Outputs = map[string]string{}
		}
		o.Outputs[name] = v.Str
		return nil
	}
}

// creatable reports whether the file at path can be written: it is
// created if missing, not truncated.
func creatable(path string) bool {
	if path == "" {
		return false
	}
	fd, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return false
	}
	fd.Close()
	return true
}

// withoutEnv returns env (dtrace's own environment when env is nil)
// without the variable name.
func withoutEnv(env []string, name string) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	return out
}

// alignedSize sets a size of at most max bytes, rounded up to a multiple
// of 8; unset, zero or too large, it is def.
func alignedSize(def, max int64, f func(*Options) *int64) func(*Options, optValue) error {
	return func(o *Options, v optValue) error {
		n := def
		if v.Present && v.Int > 0 && v.Int <= max {
			n = v.Int
		}
		*f(o) = (n + 7) &^ 7
		return nil
	}
}
