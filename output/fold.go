package output

import (
	"fmt"
	"path"
	"strings"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/program"
)

// HasStack reports whether an aggregation has a stack key.
func HasStack(a *aggregate.Agg) bool {
	for _, e := range a.Entries() {
		for _, k := range e.Key {
			if _, ok := k.(program.Stack); ok {
				return true
			}
		}
	}
	return false
}

// Sample is one entry of an aggregation as a stack: Frames root first,
// Value the aggregation's value (for quantizations, the count of values).
type Sample struct {
	Frames []string
	Value  int64
}

// Fold turns an aggregation's entries, in print order, into samples. An
// entry without keys is one frame, the aggregation's name.
func Fold(a *aggregate.Agg, sym format.Symbolizer, o aggregate.SortOptions) []Sample {
	var out []Sample
	for _, e := range a.Sorted(o) {
		// Other keys first, then user stacks, then kernel stacks,
		// which run on top of them.
		var frames, ustacks, kstacks []string
		for _, k := range e.Key {
			st, ok := k.(program.Stack)
			switch {
			case ok && st.User:
				ustacks = append(ustacks, keyFrames(k, sym)...)
			case ok:
				kstacks = append(kstacks, keyFrames(k, sym)...)
			default:
				frames = append(frames, keyFrames(k, sym)...)
			}
		}
		frames = append(append(frames, ustacks...), kstacks...)
		if len(e.Key) == 0 {
			name := a.Desc.Name
			if name == "" {
				name = "@"
			}
			frames = []string{name}
		}
		out = append(out, Sample{Frames: frames, Value: Value(a, e)})
	}
	return out
}

// Value is an entry's value as a sample: the scalar printed, or the number
// of values a quantization counted.
func Value(a *aggregate.Agg, e *aggregate.Entry) int64 {
	switch a.Desc.Func {
	case program.AggQuantize, program.AggLquantize, program.AggLlquantize:
		var n int64
		for i, c := range e.Data {
			if i < a.Desc.NSlots() {
				n += c
			}
		}
		return n / int64(max(a.Normal, 1))
	}
	switch v := a.Result(e).(type) {
	case program.Int:
		if v.Signed {
			return v.Int64()
		}
		return int64(v.Uint64())
	}
	return 0
}

// keyFrames is the frames one key gives: a stack's, root first, or the
// key's value as one frame.
func keyFrames(k program.Value, sym format.Symbolizer) []string {
	switch x := k.(type) {
	case program.Stack:
		var pcs []uint64
		for _, pc := range x.PCs {
			if pc == 0 {
				break
			}
			pcs = append(pcs, pc)
		}
		frames := make([]string, len(pcs))
		for i, pc := range pcs {
			frames[len(pcs)-1-i] = clean(FrameName(sym, x.User, x.PID, pc))
		}
		return frames
	case program.String:
		return []string{clean(string(x))}
	case program.Int:
		if x.Signed {
			return []string{fmt.Sprint(x.Int64())}
		}
		return []string{fmt.Sprint(x.Uint64())}
	case program.Sym:
		return []string{clean(FrameName(sym, x.Kind >= program.UserSym, x.PID, x.Addr))}
	case program.Float:
		return []string{fmt.Sprint(x.V)}
	case program.Bytes:
		return []string{fmt.Sprintf("%x", x.Data)}
	}
	return []string{"?"}
}

// FrameName names the function at pc as dtrace's stacks do without the
// offset: "module`function", "module`0xADDR" when only the module is
// known, "0xADDR" when nothing is.
func FrameName(sym format.Symbolizer, user bool, pid int, pc uint64) string {
	if sym != nil {
		var mod, fn string
		var ok bool
		if user {
			mod, fn, _, ok = sym.UserSym(pid, pc)
			mod = path.Base(mod)
		} else {
			mod, fn, _, ok = sym.KernelSym(pc)
		}
		switch {
		case ok && fn != "" && mod != "" && mod != ".":
			return mod + "`" + fn
		case ok && fn != "":
			return fn
		case ok && mod != "" && mod != ".":
			return fmt.Sprintf("%s`0x%x", mod, pc)
		}
	}
	return fmt.Sprintf("0x%x", pc)
}

// clean keeps a frame on its line and in one piece: ';' separates frames
// and a newline lines.
func clean(s string) string {
	return strings.NewReplacer(";", ":", "\n", " ", "\r", " ").Replace(s)
}
