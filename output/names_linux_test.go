//go:build linux

package output_test

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/flamegraph"
	"github.com/dtrace-go/dtrace/output/folded"
	"github.com/dtrace-go/dtrace/output/json"
	"github.com/dtrace-go/dtrace/output/jsonrec"
	"github.com/dtrace-go/dtrace/output/perfetto"
	"github.com/dtrace-go/dtrace/output/pprof"
	"github.com/dtrace-go/dtrace/output/text"
	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/symbol"
)

// namedStack starts names.c (stripped, its debug file under a .build-id
// directory) and returns a symbolizer that has read it with a user stack
// of it, innermost first: d, c, b, a and main at an offset into each, an
// address of its file that no function holds, and JIT code its perf map
// names; and the names each frame must have.
func namedStack(t *testing.T) (*symbol.Symbolizer, program.Stack, []string) {
	prog := testprog.BuildNames(t, "", "-O2", "-fomit-frame-pointer", "-Wl,--build-id")
	dbg := testprog.SplitDebug(t, prog, false)
	dir := t.TempDir()
	testprog.InstallBuildID(t, dir, testprog.BuildID(t, prog), dbg)
	old := symbol.DebugDir
	t.Cleanup(func() { symbol.DebugDir = old })
	symbol.DebugDir = dir
	proc := testprog.Start(t, prog, "60")
	pid := proc.Pid()
	sym := symbol.NewSymbolizer()
	t.Cleanup(sym.Close)
	p, err := sym.Snapshot(pid)
	if err != nil {
		t.Fatal(err)
	}
	var mod *symbol.Module
	var stack *symbol.Mapping
	for _, m := range p.Modules() {
		if m.Name == "names" {
			mod = m
		}
	}
	for i, m := range p.Maps {
		if m.Path == "[stack]" {
			stack = &p.Maps[i]
		}
	}
	if mod == nil || stack == nil {
		t.Fatalf("names or its stack not mapped: %+v", p.Maps)
	}
	obj, err := symbol.LoadObject(p.OpenPath(mod))
	if err != nil {
		t.Fatal(err)
	}
	bias, ok := p.Bias(mod, obj)
	if !ok {
		t.Fatal("no bias")
	}
	st := program.Stack{User: true, PID: pid}
	var want []string
	// JIT code, as a perf map names it: here, the process's stack.
	mapFile := fmt.Sprintf("/tmp/perf-%d.map", pid)
	if err := os.WriteFile(mapFile, fmt.Appendf(nil, "%x 40 jitted code\n", stack.Start+0x100), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(mapFile) })
	st.PCs = append(st.PCs, stack.Start+0x108)
	want = append(want, path.Base(mapFile)+"`jitted code")
	for _, fn := range []string{"d", "c", "b", "a", "main"} {
		v, ok := obj.SymbolValue(fn)
		if !ok {
			t.Fatalf("%s not named by the debug file", fn)
		}
		st.PCs = append(st.PCs, v+bias+1)
		want = append(want, "names`"+fn)
	}
	// The ELF header: in the file, in no function.
	st.PCs = append(st.PCs, mod.Maps[0].Start+0x10)
	want = append(want, fmt.Sprintf("names`0x%x", mod.Maps[0].Start+0x10))
	return sym, st, want
}

// TestSameNamesEverywhere renders one stack aggregation through every
// output (text, JSON Lines, folded, pprof, the flame graph, Perfetto)
// with the one symbolizer dtrace gives them all, and checks that each
// names the frames alike: names from the debug file, the address no
// function holds as module`0xADDR, the JIT frame from its perf map.
func TestSameNamesEverywhere(t *testing.T) {
	sym, st, want := namedStack(t)
	agg := aggregate.New(&aggregate.Desc{ID: 0, Name: "@", Func: program.AggCount})
	agg.Add([]program.Value{st}, []int64{7})
	aggs := []*aggregate.Agg{agg}
	var opts aggregate.SortOptions
	got := map[string][]string{}

	var b bytes.Buffer
	if err := text.New(text.Config{Out: &b, Sym: sym, Settings: output.Settings{Quiet: true}}).Aggregations(aggs); err != nil {
		t.Fatal(err)
	}
	offset := regexp.MustCompile(`\+0x[0-9a-f]+$`)
	for _, l := range strings.Split(b.String(), "\n") {
		if l = strings.TrimSpace(l); l != "" && l != "7" {
			got["text"] = append(got["text"], offset.ReplaceAllString(l, ""))
		}
	}

	b.Reset()
	if err := json.New(json.Config{Out: &b, Sym: sym}).Aggregations(aggs); err != nil {
		t.Fatal(err)
	}
	got["json"] = jsonFrames(t, b.Bytes())

	b.Reset()
	if err := folded.New(text.New(text.Config{Out: &b, Sym: sym, Settings: output.Settings{Quiet: true}}), sym, aggregate.SortOptions{}).Aggregations(aggs); err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(b.String()), "\n")
	frames := strings.Split(line[:strings.LastIndexByte(line, ' ')], ";")
	slices.Reverse(frames)
	got["folded"] = frames

	prof := pprof.Build(aggs, sym, opts)
	if prof == nil || len(prof.Sample) != 1 {
		t.Fatalf("pprof: %v", prof)
	}
	for _, l := range prof.Sample[0].Location {
		name := fmt.Sprintf("0x%x", l.Address)
		if len(l.Line) > 0 {
			name = l.Line[0].Function.Name
		}
		if l.Mapping != nil {
			name = path.Base(l.Mapping.File) + "`" + name
		}
		got["pprof"] = append(got["pprof"], name)
	}

	b.Reset()
	if err := flamegraph.Write(&b, aggs, sym, opts, "t"); err != nil {
		t.Fatal(err)
	}
	byDepth := map[int]string{}
	for _, m := range regexp.MustCompile(`data-d="([0-9]+)" data-n="([^"]*)"`).FindAllStringSubmatch(b.String(), -1) {
		d, _ := strconv.Atoi(m[1])
		byDepth[d] = strings.ReplaceAll(m[2], "&#34;", `"`)
	}
	for d := len(byDepth) - 1; d > 0; d-- { // 0 is the root, "all"
		got["flamegraph"] = append(got["flamegraph"], byDepth[d])
	}

	b.Reset()
	if err := perfetto.New(perfetto.Config{Out: &b, Config: jsonrec.Config{Sym: sym},
		Text: func(w io.Writer) output.Printer { return text.New(text.Config{Stderr: w}) }}).Aggregations(aggs); err != nil {
		t.Fatal(err)
	}
	var trace struct {
		OtherData struct {
			Aggregations []stdjson.RawMessage `json:"aggregations"`
		} `json:"otherData"`
	}
	if err := stdjson.Unmarshal(b.Bytes(), &trace); err != nil {
		t.Fatalf("perfetto: %v\n%s", err, b.String())
	}
	for _, a := range trace.OtherData.Aggregations {
		got["perfetto"] = append(got["perfetto"], jsonFrames(t, a)...)
	}

	for _, out := range []string{"text", "json", "folded", "pprof", "flamegraph", "perfetto"} {
		if !slices.Equal(got[out], want) {
			t.Errorf("%s names the frames\n\t%q\nwant\n\t%q", out, got[out], want)
		}
	}
	// pprof's locations carry the lines the debug file's DWARF gives.
	for _, l := range prof.Sample[0].Location {
		if len(l.Line) > 0 && l.Line[0].Function.Name == "d" && (!strings.HasSuffix(l.Line[0].Function.Filename, "names.c") || l.Line[0].Line == 0) {
			t.Errorf("pprof: d at %s:%d, want a line of names.c", l.Line[0].Function.Filename, l.Line[0].Line)
		}
	}
}

// jsonFrames returns the frames of the stacks in JSON text (objects of
// -x oformat=json, or one aggregation), as module`symbol or
// module`0xADDR.
func jsonFrames(t *testing.T, b []byte) []string {
	t.Helper()
	var out []string
	dec := stdjson.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("json: %v\n%s", err, b)
		}
		walkStacks(v, func(frames []any) {
			for _, f := range frames {
				m, _ := f.(map[string]any)
				mod, _ := m["module"].(string)
				sym, _ := m["symbol"].(string)
				addr, _ := m["address"].(float64)
				if sym == "" {
					sym = fmt.Sprintf("0x%x", uint64(addr))
				}
				out = append(out, mod+"`"+sym)
			}
		})
	}
	return out
}

// walkStacks calls f with the frames of every stack value in v.
func walkStacks(v any, f func([]any)) {
	switch x := v.(type) {
	case map[string]any:
		if x["type"] == "stack" {
			if frames, ok := x["frames"].([]any); ok {
				f(frames)
				return
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			walkStacks(x[k], f)
		}
	case []any:
		for _, e := range x {
			walkStacks(e, f)
		}
	}
}
