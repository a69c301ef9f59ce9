package json

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/internal/testutil/outtest"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// schema compiles docs/oformat-json.schema.json.
func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "docs", "oformat-json.schema.json")
	doc := outtest.Parse(t, path, jsonschema.UnmarshalJSON)
	c := jsonschema.NewCompiler()
	if err := c.AddResource("oformat-json.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("oformat-json.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validate checks that every line of out is one JSON object the schema
// accepts, and returns them decoded.
func validate(t *testing.T, s *jsonschema.Schema, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if err := s.Validate(inst); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q is not an object: %v", line, err)
		}
		objs = append(objs, m)
	}
	return objs
}

// syms resolves kernel addresses 0x1000+ and user addresses 0x400000+.
type syms struct{}

func (syms) KernelSym(addr uint64) (string, string, uint64, bool) {
	if addr < 0x1000 {
		return "", "", 0, false
	}
	return "vmlinux", "do_syscall_64", addr - 0x1000, true
}

func (syms) UserSym(pid int, addr uint64) (string, string, uint64, bool) {
	if addr < 0x400000 {
		return "", "", 0, false
	}
	if addr >= 0x500000 {
		return "/usr/lib/libc.so.6", "", 0, true
	}
	return "/tmp/a.out", "work", addr - 0x400000, true
}

func agg(t *testing.T, d *aggregate.Desc, vals map[string][]int64) *aggregate.Agg {
	t.Helper()
	a := aggregate.New(d)
	for k, vs := range vals {
		slots := make([]int64, d.NSlots())
		for _, v := range vs {
			d.Update(slots, v, 1)
		}
		var key []program.Value
		if k != "" {
			key = []program.Value{program.String(k), program.I32(-3)}
		}
		a.Add(key, slots)
	}
	return a
}

// TestEvents renders one of each event and checks the objects against
// the schema and by value.
func TestEvents(t *testing.T) {
	s := schema(t)
	var out, errs bytes.Buffer
	stamp := time.Unix(1700000000, 5)
	r := New(Config{Out: &out, Stderr: &errs, Sym: syms{}, Machine: "m1", Now: func() time.Time { return stamp }})
	pf, err := format.Parse("x=%d s=%s\n")
	if err != nil {
		t.Fatal(err)
	}
	count := agg(t, &aggregate.Desc{ID: 0, Name: "@calls", Func: program.AggCount}, map[string][]int64{"getppid": make([]int64, 777)})
	quant := agg(t, &aggregate.Desc{ID: 1, Name: "@", Func: program.AggQuantize}, map[string][]int64{"": {0, 1, 5, 6, 7, 1000, -2}})
	lq := agg(t, &aggregate.Desc{ID: 2, Name: "@l", Func: program.AggLquantize, Base: 0, Levels: 5, Step: 10},
		map[string][]int64{"a": {-1, 3, 49, 50, 1000}})
	llq := agg(t, &aggregate.Desc{ID: 3, Name: "@ll", Func: program.AggLlquantize, Factor: 10, Lmag: 0, Hmag: 3, Steps: 10},
		map[string][]int64{"a": {0, 5, 55, 12345}})
	avg := agg(t, &aggregate.Desc{ID: 4, Name: "@avg", Func: program.AggAvg}, map[string][]int64{"b": {2, 4}})

	rec := &output.Record{CPU: 1, EPID: 3, Clause: 0, Known: true, First: true, Data: true,
		Probe: output.Probe{ID: 77, Provider: "syscall", Module: "vmlinux", Function: "getppid", Name: "entry"}}
	items := []output.Item{
		{Kind: program.ActPrintf, Format: pf, Args: []program.Value{program.I32(-5), program.String("hi")}},
		{Kind: program.ActTrace, Value: program.U64(math.MaxUint64)},
		{Kind: program.ActTrace, Value: program.Float{V: math.NaN(), Size: 8}},
		{Kind: program.ActTrace, Value: program.Float{V: 1.5, Size: 8}},
		{Kind: program.ActTrace, Value: program.Bytes{Data: []byte{1, 0xab}, Type: "char [2]"}},
		{Kind: program.ActStack, Value: program.Stack{PCs: []uint64{0x1010, 0x10, 0}}},
		{Kind: program.ActStack, Value: program.Stack{PCs: []uint64{0x400004, 0x500000}, User: true, PID: 42}},
		{Kind: program.ActSym, Value: program.Sym{Addr: 0x400008, PID: 42, Kind: program.UserSym}},
		{Kind: program.ActTracemem, Data: []byte{0xde, 0xad}},
		{Kind: program.ActPrinta, Aggs: []*aggregate.Agg{count}},
		{Kind: program.ActClear, Aggs: []*aggregate.Agg{count}},
		{Kind: program.ActExit, N: 3},
	}
	if err := r.Begin(rec); err != nil {
		t.Fatal(err)
	}
	for i := range items {
		if err := r.Item(rec, &items[i]); err != nil {
			t.Fatal(err)
		}
	}
	must(t, r.End(rec))
	// A record holding no data (commit() alone) prints nothing.
	empty := &output.Record{Known: true}
	must(t, r.Begin(empty))
	must(t, r.Item(empty, &output.Item{Kind: program.ActCommit, N: 1}))
	must(t, r.End(empty))
	must(t, r.Fault(&output.Fault{Probe: rec.Probe, Known: true, CPU: 0, Name: "invalid address", Code: 1, Addr: 0x10, PC: -1}))
	must(t, r.Error(&output.Error{Msg: "failed to open"}))
	must(t, r.Drop(&output.Drop{Kind: output.DropDynamic, CPU: -1, Count: 9}))
	count.Printed = true
	must(t, r.Aggregations([]*aggregate.Agg{count, quant, lq, llq, avg}))

	objs := validate(t, s, out.String())
	types := []string{}
	for _, o := range objs {
		types = append(types, o["type"].(string))
		if o["machine"] != "m1" || o["timestamp"].(float64) != float64(stamp.UnixNano()) {
			t.Errorf("machine/timestamp of %v", o)
		}
	}
	if got := strings.Join(types, " "); got != "probe fault error drop aggregation aggregation aggregation aggregation" {
		t.Fatalf("objects %s:\n%s", got, out.String())
	}
	line := strings.SplitN(out.String(), "\n", 2)[0]
	for _, want := range []string{
		`"probe":{"id":77,"provider":"syscall","module":"vmlinux","function":"getppid","name":"entry"}`,
		`{"action":"printf","text":"x=-5 s=hi\n","format":"x=%d s=%s\n","args":[{"type":"int","size":4,"signed":true,"value":-5},{"type":"string","value":"hi"}]}`,
		`{"type":"int","size":8,"signed":false,"value":18446744073709551615}`,
		`{"type":"float","size":8,"value":"nan"}`,
		`{"type":"bytes","value":"01ab","ctype":"char [2]"}`,
		`"frames":[{"address":4112,"module":"vmlinux","symbol":"do_syscall_64","offset":16},{"address":16,"offset":0}]`,
		`{"action":"ustack","value":{"type":"stack","user":true,"pid":42,"frames":[{"address":4194308,"module":"a.out","symbol":"work","offset":4},{"address":5242880,"module":"libc.so.6","offset":0}]}}`,
		`{"type":"sym","user":true,"pid":42,"kind":"usym","address":4194312,"module":"a.out","symbol":"work","offset":8}`,
		`{"action":"tracemem","data":"dead"}`,
		`"entries":[{"keys":[{"type":"string","value":"getppid"},{"type":"int","size":4,"signed":true,"value":-3}],"value":777}]`,
		`{"action":"clear","aggregation":"calls"}`,
		`{"action":"exit","n":3}`,
	} {
		if !strings.Contains(line, want) {
			t.Errorf("record lacks %s:\n%s", want, line)
		}
	}
	aggs := strings.Split(strings.TrimSpace(out.String()), "\n")[4:]
	for i, want := range []string{
		`"name":"","function":"quantize","entries":[{"keys":[],"buckets":[[-3,-2,1],[0,0,1],[1,1,1],[4,7,3],[512,1023,1]]}]`,
		`"name":"l","function":"lquantize","entries":[{"keys":[{"type":"string","value":"a"},{"type":"int","size":4,"signed":true,"value":-3}],"buckets":[[-9223372036854775808,-1,1],[0,9,1],[40,49,1],[50,9223372036854775807,2]]}]`,
		`"buckets":[[0,0,1],[5,5,1],[50,59,1],[10000,9223372036854775807,1]]`,
		`"name":"avg","function":"avg","entries":[{"keys":[{"type":"string","value":"b"},{"type":"int","size":4,"signed":true,"value":-3}],"value":3}]`,
	} {
		if !strings.Contains(aggs[i], want) {
			t.Errorf("aggregation %d lacks %s:\n%s", i, want, aggs[i])
		}
	}
	if errs.Len() != 0 {
		t.Errorf("stderr %q", errs.String())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
