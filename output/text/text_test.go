package text

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

func TestDropMessage(t *testing.T) {
	tests := []struct {
		d    output.Drop
		tags bool
		want string
	}{
		{output.Drop{CPU: 0, Count: 1}, false, "1 drop on CPU 0"},
		{output.Drop{CPU: 1, Count: 2}, false, "2 drops on CPU 1"},
		{output.Drop{CPU: 3, Count: 1}, true, "[DTRACEDROP_PRINCIPAL] 1 drop on CPU 3"},
		{output.Drop{CPU: 0, Kind: output.DropAggregation, Count: 3}, true, "[DTRACEDROP_AGGREGATION] 3 aggregation drops on CPU 0"},
		{output.Drop{CPU: -1, Kind: output.DropDynamic, Count: 2}, false, "2 dynamic variable drops"},
		{output.Drop{CPU: -1, Kind: output.DropSpec, Count: 1}, true, "[DTRACEDROP_SPEC] 1 speculative drop"},
		{output.Drop{CPU: -1, Kind: output.DropSpecBusy, Count: 1}, false, "1 failed speculation (available buffer(s) still busy)"},
		// dtrace's 80-byte buffer cuts the tagged message.
		{output.Drop{CPU: -1, Kind: output.DropSpecUnavail, Count: 12}, true,
			"[DTRACEDROP_SPECUNAVAIL] 12 failed speculations (no speculative buffer availabl: No such process"},
	}
	for _, tt := range tests {
		if got := DropMessage(&tt.d, tt.tags); got != tt.want {
			t.Errorf("DropMessage(%+v, %v) = %q, want %q", tt.d, tt.tags, got, tt.want)
		}
	}
}

// render runs one record with the given items through r.
func render(t *testing.T, r *Renderer, rec *output.Record, items ...output.Item) {
	t.Helper()
	if err := r.Begin(rec); err != nil {
		t.Fatal(err)
	}
	for i := range items {
		if err := r.Item(rec, &items[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.End(rec); err != nil {
		t.Fatal(err)
	}
}

// flush is the consumer's Flush at the end of a pass.
func flush(t *testing.T, r *Renderer) {
	t.Helper()
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
}

// flushWant flushes r and fails unless out then holds want.
func flushWant(t *testing.T, r *Renderer, out *bytes.Buffer, want string) {
	t.Helper()
	flush(t, r)
	if out.String() != want {
		t.Errorf("got\n%q\nwant\n%q", out.String(), want)
	}
}

// Records are written out at Flush (after each pass over the buffers),
// or once flushSize bytes are held, not one write per record; a drop
// message comes after the records before it.
func TestEndBuffers(t *testing.T) {
	var out, errs bytes.Buffer
	r := New(Config{Out: &out, Stderr: &errs, Settings: output.Settings{Quiet: true}})
	tr := output.Item{Kind: program.ActTrace, Value: program.String("x")}
	render(t, r, &output.Record{First: true, Data: true}, tr)
	if out.Len() != 0 {
		t.Fatalf("record written before Flush: %q", out.String())
	}
	if err := r.Drop(&output.Drop{CPU: 0, Count: 1}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "x" || errs.String() != "dtrace: 1 drop on CPU 0\n" {
		t.Fatalf("before the drop message: out %q, errors %q", out.String(), errs.String())
	}
	for out.Len() < flushSize {
		render(t, r, &output.Record{First: true, Data: true}, tr)
	}
	n := out.Len()
	render(t, r, &output.Record{First: true, Data: true}, tr)
	flush(t, r)
	if out.Len() != n+1 || strings.Count(out.String(), "x") != out.Len() {
		t.Errorf("after Flush %d bytes, want %d", out.Len(), n+1)
	}
}

func probe(id uint32, prov, fn, name string) output.Probe {
	return output.Probe{ID: id, Provider: prov, Function: fn, Name: name}
}

func TestProbeLines(t *testing.T) {
	var out bytes.Buffer
	r := New(Config{Out: &out})
	rec := &output.Record{CPU: 1, Probe: probe(1, "dtrace", "", "BEGIN"), Known: true, First: true, Data: true}
	render(t, r, rec, output.Item{Kind: program.ActTrace, Value: program.I32(5)})
	// A record that only commits prints nothing; a later segment no
	// probe line.
	render(t, r, &output.Record{CPU: 1, Known: true, First: true, Data: false}, output.Item{Kind: program.ActDiscard, N: 1})
	render(t, r, &output.Record{CPU: 1, Probe: rec.Probe, Known: true, First: false, Data: true},
		output.Item{Kind: program.ActTrace, Value: program.I32(6)})
	want := "CPU     ID                    FUNCTION:NAME\n" +
		"  1      1                           :BEGIN           5\n" +
		"          6\n"
	flushWant(t, r, &out, want)
}

func TestFlowIndent(t *testing.T) {
	var out bytes.Buffer
	r := New(Config{Out: &out, Testing: true, Settings: output.Settings{FlowIndent: true, Quiet: true}})
	for _, p := range []output.Probe{
		probe(10, "syscall", "read", "entry"),
		probe(11, "fbt", "vfs_read", "entry"),
		probe(12, "fbt", "vfs_read", "return"),
		probe(13, "syscall", "read", "return"),
		probe(14, "profile", "", "tick-1s"),
	} {
		render(t, r, &output.Record{Probe: p, Known: true, First: true, Data: true})
	}
	want := "FUNCTION                                 \n" +
		" => read                                  " +
		"   -> vfs_read                            " +
		"   <- vfs_read                            " +
		" <= read                                  " +
		"| :tick-1s                                "
	flushWant(t, r, &out, want)
}

// setopt("quiet") within a record takes effect for what follows, but
// the record ends as it began (with its newline).
func TestSetoptQuietWithinRecord(t *testing.T) {
	var out bytes.Buffer
	r := New(Config{Out: &out, Testing: true})
	quiet := output.Settings{Quiet: true}
	rec := &output.Record{Probe: probe(1, "dtrace", "", "BEGIN"), Known: true, First: true, Data: true}
	render(t, r, rec, output.Item{Kind: program.ActSetopt, Text: "quiet", Settings: &quiet},
		output.Item{Kind: program.ActTrace, Value: program.String("x")})
	render(t, r, rec, output.Item{Kind: program.ActTrace, Value: program.String("y")})
	want := "                   FUNCTION:NAME\n                          :BEGIN x\ny"
	flushWant(t, r, &out, want)
}

// Committed records print where commit() is, between what the record
// printed before and after it.
func TestCommitNesting(t *testing.T) {
	var out bytes.Buffer
	r := New(Config{Out: &out, Settings: output.Settings{Quiet: true}})
	f, err := format.Parse("%s")
	if err != nil {
		t.Fatal(err)
	}
	pr := func(s string) output.Item {
		return output.Item{Kind: program.ActPrintf, Format: f, Args: []program.Value{program.String(s)}}
	}
	outer := &output.Record{First: true, Data: true}
	if err := r.Begin(outer); err != nil {
		t.Fatal(err)
	}
	for _, it := range []output.Item{pr("a"), {Kind: program.ActCommit, N: 1}} {
		if err := r.Item(outer, &it); err != nil {
			t.Fatal(err)
		}
	}
	if out.String() != "a" {
		t.Fatalf("commit did not write out the record so far: %q", out.String())
	}
	render(t, r, &output.Record{First: true, Data: true, Spec: 1}, pr("b"))
	it := pr("c")
	if err := r.Item(outer, &it); err != nil {
		t.Fatal(err)
	}
	if err := r.End(outer); err != nil {
		t.Fatal(err)
	}
	flushWant(t, r, &out, "abc")
}

func TestFreopen(t *testing.T) {
	var out bytes.Buffer
	r := New(Config{Out: &out, Settings: output.Settings{Quiet: true}})
	file, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	rec := &output.Record{First: true, Data: true}
	tr := func(s string) output.Item { return output.Item{Kind: program.ActTrace, Value: program.String(s)} }
	render(t, r, rec, tr("1"), output.Item{Kind: program.ActFreopen, File: file}, tr("2"))
	if r.Output() != file {
		t.Error("Output is not the reopened file")
	}
	render(t, r, rec, tr("3"), output.Item{Kind: program.ActFreopen}, tr("4"))
	if r.Output() != &out {
		t.Error("Output is not the original writer after freopen(\"\")")
	}
	flush(t, r)
	data, err := os.ReadFile(file.Name())
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != "14" || string(data) != "23" {
		t.Errorf("output %q, file %q; want \"14\" and \"23\"", out.String(), data)
	}
}

// TestFtruncate: ftruncate() empties a file output (what came before it
// in the record included) and later output starts the file again; output
// that is no file is left alone.
func TestFtruncate(t *testing.T) {
	file, err := os.OpenFile(filepath.Join(t.TempDir(), "f"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	r := New(Config{Out: file, Settings: output.Settings{Quiet: true}})
	rec := &output.Record{First: true, Data: true}
	tr := func(s string) output.Item { return output.Item{Kind: program.ActTrace, Value: program.String(s)} }
	render(t, r, rec, tr("1"))
	render(t, r, rec, tr("2"), output.Item{Kind: program.ActFtruncate}, tr("3"))
	render(t, r, rec, tr("4"))
	flush(t, r)
	if data, err := os.ReadFile(file.Name()); err != nil || string(data) != "34" {
		t.Errorf("file %q (%v); want \"34\"", data, err)
	}

	var out bytes.Buffer
	r = New(Config{Out: &out, Settings: output.Settings{Quiet: true}})
	render(t, r, rec, tr("1"), output.Item{Kind: program.ActFtruncate}, tr("2"))
	flush(t, r)
	if out.String() != "12" {
		t.Errorf("buffer output %q; want \"12\"", out.String())
	}
}

func TestFaultAndErrorMessages(t *testing.T) {
	var errs bytes.Buffer
	r := New(Config{Out: &bytes.Buffer{}, Stderr: &errs})
	begin := probe(1, "dtrace", "", "BEGIN")
	faults := []output.Fault{
		{Probe: begin, Known: true, Clause: 0, Code: 1, Name: "invalid address", Addr: 8, PC: 12},
		{Probe: begin, Known: true, Clause: 2, Code: 1, Name: "invalid address", Addr: ^uint64(0), PC: -1},
		{Probe: probe(9, "", "", ""), Clause: 1, Code: 11, Name: "index out of bounds", Addr: ^uint64(0), PC: 3},
		{Probe: begin, Known: true, Code: 99, PC: -1},
	}
	for i := range faults {
		if err := r.Fault(&faults[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Error(&output.Error{Probe: begin, Known: true, Clause: 4, Msg: "oops"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Error(&output.Error{Clause: 5, Msg: "unknown probe"}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"dtrace: error in dt_clause_0 for probe ID 1 (dtrace:::BEGIN): invalid address (0x8) at BPF pc 12",
		"dtrace: error in dt_clause_2 for probe ID 1 (dtrace:::BEGIN): invalid address",
		"dtrace: error in dt_clause_1 for probe ID 9 (::::): index out of bounds (-1) at BPF pc 3",
		"dtrace: error in dt_clause_0 for probe ID 1 (dtrace:::BEGIN): unknown fault",
		"dtrace: error in dt_clause_4 for probe ID 1 (dtrace:::BEGIN): oops",
		"dtrace: error in dt_clause_5 for probe ID 0 (:::): unknown probe",
	}
	if got := strings.Split(strings.TrimSuffix(errs.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
