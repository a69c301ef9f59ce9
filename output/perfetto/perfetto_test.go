package perfetto

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/jsonrec"
	"github.com/dtrace-go/dtrace/output/text"
	"github.com/dtrace-go/dtrace/program"
)

// fake is a renderer on a clock the test moves, with names of its own.
type fake struct {
	*Renderer
	now uint64
	out bytes.Buffer
	err bytes.Buffer
}

func newFake() *fake {
	f := &fake{now: 1000}
	f.Renderer = New(Config{Out: &f.out, Stderr: &f.err, Text: textRenderer, Clock: func() uint64 { return f.now },
		Names: func(pid, tid int) (string, string) { return "proc", "thr" }})
	return f
}

// fire renders one record of probe fn:name by thread tid at time t,
// tracing v.
func (f *fake) fire(t *testing.T, tid int, at uint64, fn, name string, clause int, v uint64) {
	t.Helper()
	id := uint32(1)
	if name == "return" {
		id = 2
	}
	rec := &output.Record{CPU: tid % 2, EPID: id, Clause: clause, Known: true, First: true, Data: true,
		Probe: output.Probe{ID: id, Provider: "pid42", Module: "a.out", Function: fn, Name: name},
		Time:  at, PID: 42, TID: tid}
	if err := f.Begin(rec); err != nil {
		t.Fatal(err)
	}
	it := output.Item{Kind: program.ActTrace, Value: program.Int{Bits: v, Size: 8, Signed: true}}
	rec.Items = append(rec.Items, it)
	if err := f.Item(rec, &rec.Items[0]); err != nil {
		t.Fatal(err)
	}
	if err := f.End(rec); err != nil {
		t.Fatal(err)
	}
}

func (f *fake) check(t *testing.T) *Summary {
	t.Helper()
	s, err := Check(f.out.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, f.out.String())
	}
	return s
}

// TestSlices: entries and returns pair up per thread into closed
// slices whatever order the CPUs deliver them in; a return without entry
// is dropped, entries without return are closed at exit, both counted.
func TestSlices(t *testing.T) {
	f := newFake()
	// Thread 7 on one CPU, read first; thread 8 on another, earlier.
	f.fire(t, 7, 2000, "a", "entry", 0, 1)
	f.fire(t, 7, 2100, "b", "entry", 0, 2)
	f.fire(t, 7, 2200, "b", "return", 0, 3)
	f.fire(t, 7, 2300, "a", "return", 0, 4)
	f.fire(t, 8, 1500, "z", "return", 0, 5) // entry before tracing
	f.fire(t, 8, 1600, "a", "entry", 0, 6)
	f.fire(t, 8, 1700, "b", "entry", 0, 7) // its return missed
	f.fire(t, 8, 1800, "a", "return", 0, 8)
	f.fire(t, 8, 1900, "c", "entry", 0, 9) // open at exit
	f.fire(t, 8, 1900, "c", "entry", 1, 10)
	f.fire(t, 8, 1950, "tick", "tick-1s", 0, 11)
	f.now = 5000
	if err := f.Flush(); err != nil {
		t.Fatal(err)
	}
	// Nothing is older than the previous Flush (the start): nothing
	// can be written yet.
	if f.out.Len() != 0 {
		t.Fatalf("written before its time: %s", f.out.String())
	}
	f.fire(t, 7, 5100, "d", "entry", 0, 12)
	f.now = 6000
	if err := f.Flush(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(f.out.String(), `{"traceEvents":[`) || strings.Contains(f.out.String(), `"d"`) {
		t.Fatalf("after the second Flush:\n%s", f.out.String())
	}
	if err := f.Aggregations(nil); err != nil {
		t.Fatal(err)
	}
	s := f.check(t)
	// a, b on 7; a (closing b) on 8; c on 8 and d on 7 closed at exit.
	if s.Slices != 6 || s.Instants != 1 || s.Tracks != 2 {
		t.Errorf("%d slices, %d instants, %d tracks", s.Slices, s.Instants, s.Tracks)
	}
	od := s.OtherData
	if od["unmatched_returns"] != float64(1) || od["entries_closed_at_exit"] != float64(3) || od["slices"] != float64(6) {
		t.Errorf("otherData %v", od)
	}
	// The second clause of c's firing adds to its event.
	if !strings.Contains(f.out.String(), `"value":9}},{"action":"trace","value":{"type":"int","size":8,"signed":true,"value":10}`) {
		t.Errorf("clauses of one firing not merged:\n%s", f.out.String())
	}
	if s.Processes[42] != "proc" {
		t.Errorf("processes %v", s.Processes)
	}
	// Close after Aggregations writes nothing more.
	n := f.out.Len()
	if err := f.Close(); err != nil || f.out.Len() != n {
		t.Errorf("Close: %v, %d bytes more", err, f.out.Len()-n)
	}
}

// TestMachines: another machine's events get pids of their own and
// process names that say which machine; its aggregations and the
// drops go to otherData.
func TestMachines(t *testing.T) {
	f := newFake()
	f.fire(t, 7, 2000, "a", "entry", 0, 1)
	f.Add(&Event{Machine: "vm1", Time: 2050, PID: 42, TID: 7, Process: "guestproc",
		Probe: output.Probe{ID: 3, Provider: "syscall", Function: "getppid", Name: "entry"}})
	f.Add(&Event{Machine: "vm1", Time: 2060, PID: 42, TID: 7,
		Probe: output.Probe{ID: 4, Provider: "syscall", Function: "getppid", Name: "return"}})
	f.AddAggregation(&jsonrec.Aggregation{Machine: "vm1", Name: "", Function: "count", Entries: []jsonrec.Entry{}})
	if err := f.Drop(&output.Drop{Kind: output.DropPrincipal, CPU: 1, Count: 3}); err != nil {
		t.Fatal(err)
	}
	f.fire(t, 7, 2100, "a", "return", 0, 2)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	s := f.check(t)
	if s.Slices != 2 || s.Tracks != 3 {
		t.Errorf("%d slices on %d tracks", s.Slices, s.Tracks)
	}
	if s.Processes[42] != "host: proc" || s.Processes[42+maxPID] != "vm1: guestproc" {
		t.Errorf("processes %v", s.Processes)
	}
	if got := f.err.String(); got != "dtrace: 3 drops on CPU 1\n" {
		t.Errorf("stderr %q", got)
	}
	od := s.OtherData
	if d, _ := od["drops"].(map[string]any); d["DTRACEDROP_PRINCIPAL"] != float64(3) {
		t.Errorf("otherData %v", od)
	}
	if a, _ := od["aggregations"].([]any); len(a) != 1 {
		t.Errorf("otherData %v", od)
	}
}

// TestCheck: the checker refuses what breaks the format's rules.
func TestCheck(t *testing.T) {
	bad := map[string]string{
		"not object":  `[]`,
		"no events":   `{}`,
		"open slice":  `{"traceEvents":[{"name":"a","ph":"B","ts":1,"pid":1,"tid":1}]}`,
		"E without B": `{"traceEvents":[{"name":"a","ph":"E","ts":1,"pid":1,"tid":1}]}`,
		"E mismatch":  `{"traceEvents":[{"name":"a","ph":"B","ts":1,"pid":1,"tid":1},{"name":"b","ph":"E","ts":2,"pid":1,"tid":1}]}`,
		"backwards":   `{"traceEvents":[{"name":"a","ph":"i","ts":2,"pid":1,"tid":1},{"name":"a","ph":"i","ts":1,"pid":1,"tid":1}]}`,
		"string ts":   `{"traceEvents":[{"name":"a","ph":"i","ts":"1","pid":1,"tid":1}]}`,
		"float pid":   `{"traceEvents":[{"name":"a","ph":"i","ts":1,"pid":1.5,"tid":1}]}`,
		"bad phase":   `{"traceEvents":[{"name":"a","ph":"Q","ts":1,"pid":1,"tid":1}]}`,
		"bad scope":   `{"traceEvents":[{"name":"a","ph":"B","s":"t","ts":1,"pid":1,"tid":1}]}`,
		"X no dur":    `{"traceEvents":[{"name":"a","ph":"X","ts":1,"pid":1,"tid":1}]}`,
		"bad unit":    `{"traceEvents":[],"displayTimeUnit":"s"}`,
		"trailing":    `{"traceEvents":[]} {}`,
	}
	for name, in := range bad {
		if _, err := Check([]byte(in)); err == nil {
			t.Errorf("%s: accepted %s", name, in)
		}
	}
	good := `{"traceEvents":[{"name":"a","ph":"B","ts":1,"pid":1,"tid":1},{"name":"x","ph":"i","ts":1,"pid":2,"tid":2,"s":"g"},` +
		`{"name":"a","ph":"E","ts":3.5,"pid":1,"tid":1},{"name":"c","ph":"X","ts":4,"dur":1,"pid":1,"tid":1}],"displayTimeUnit":"ns"}`
	s, err := Check([]byte(good))
	if err != nil || s.Slices != 2 || s.Instants != 1 {
		t.Errorf("good file: %v %+v", err, s)
	}
}

// textRenderer is what the registry's user supplies as Config.Text.
func textRenderer(stderr io.Writer) output.Printer { return text.New(text.Config{Stderr: stderr}) }
