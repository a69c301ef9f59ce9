//go:build linux

package dtrace

import (
	"testing"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// recorder is a renderer that keeps copies of the events it gets.
type recorder struct {
	output.Nop
	records []output.Record  // Items copied at End
	items   []program.Action // kinds as Item saw them
	printa  map[string]int64
	faults  []output.Fault
	final   []*aggregate.Agg
	depth   int
}

func (r *recorder) Begin(rec *output.Record) error {
	r.depth++
	if len(rec.Items) != 0 {
		return errTest("Begin with items")
	}
	return nil
}

func (r *recorder) Item(rec *output.Record, it *output.Item) error {
	r.items = append(r.items, it.Kind)
	if it.Kind == program.ActPrinta {
		// The snapshot as printa() shows it, read now: later actions
		// may change it.
		r.printa = map[string]int64{}
		for _, e := range it.Aggs[0].Entries() {
			r.printa[string(e.Key[0].(program.String))] = it.Aggs[0].Result(e).(program.Int).Int64()
		}
	}
	return nil
}

func (r *recorder) End(rec *output.Record) error {
	r.depth--
	cp := *rec
	cp.Items = append([]output.Item(nil), rec.Items...)
	r.records = append(r.records, cp)
	return nil
}

func (r *recorder) Fault(f *output.Fault) error {
	r.faults = append(r.faults, *f)
	return nil
}

func (r *recorder) Aggregations(aggs []*aggregate.Agg) error {
	r.final = aggs
	return nil
}

type errTest string

func (e errTest) Error() string { return string(e) }

// A Go program receives BEGIN's records as typed events: the probe, the
// printf() format and arguments, trace()'s value, printa()'s snapshot
// with typed keys and values, exit()'s status, a fault of another
// clause, and the final aggregations.
func TestConsumeEvents(t *testing.T) {
	h, err := Open(NewOptions(), Config{})
	if err != nil {
		t.Skip(err)
	}
	defer h.Close()
	src := `
BEGIN { trace(*(int *)8); }
BEGIN {
	printf("%d %s\n", 42, "hello");
	trace((short)-7);
	@a["k"] = count(); @a["k"] = count(); @a["j"] = count();
	printa(@a);
	clear(@a);
	exit(3);
}`
	startTest(t, h, "test", src)
	r := &recorder{}
	for i := 0; ; i++ {
		done, err := h.Consume(r)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		if i == 500 {
			t.Fatal("not done after exit()")
		}
	}
	if err := h.Aggregations(r); err != nil {
		t.Fatal(err)
	}
	if h.ExitStatus() != 3 {
		t.Errorf("exit status %d, want 3", h.ExitStatus())
	}
	if r.depth != 0 {
		t.Errorf("Begin/End unbalanced: %d", r.depth)
	}

	if len(r.faults) != 1 {
		t.Fatalf("faults: %+v, want 1", r.faults)
	}
	f := r.faults[0]
	if f.Code != 1 || f.Name != "invalid address" || f.Addr != 8 || f.Clause != 0 || !f.Known || f.Probe.Name != "BEGIN" {
		t.Errorf("fault %+v", f)
	}

	if len(r.records) != 1 {
		t.Fatalf("records: %+v, want 1", r.records)
	}
	rec := r.records[0]
	want := output.Probe{ID: 1, Provider: "dtrace", Name: "BEGIN"}
	if rec.Probe != want || !rec.Known || !rec.First || !rec.Data || rec.Clause != 1 || rec.Spec != 0 {
		t.Errorf("record %+v", rec)
	}
	kinds := []program.Action{program.ActPrintf, program.ActTrace, program.ActPrinta, program.ActClear, program.ActExit}
	if len(rec.Items) != len(kinds) {
		t.Fatalf("items %+v, want kinds %v", rec.Items, kinds)
	}
	for i, k := range kinds {
		if rec.Items[i].Kind != k || r.items[i] != k {
			t.Errorf("item %d: %v (Item saw %v), want %v", i, rec.Items[i].Kind, r.items[i], k)
		}
	}
	pf := rec.Items[0]
	if pf.Format == nil || len(pf.Args) != 2 {
		t.Fatalf("printf item %+v", pf)
	}
	if a, ok := pf.Args[0].(program.Int); !ok || a.Int64() != 42 || !a.Signed {
		t.Errorf("printf arg 0 = %#v, want int 42", pf.Args[0])
	}
	if a, ok := pf.Args[1].(program.String); !ok || a != "hello" {
		t.Errorf("printf arg 1 = %#v, want \"hello\"", pf.Args[1])
	}
	if v, ok := rec.Items[1].Value.(program.Int); !ok || v.Int64() != -7 || v.Size != 2 || !v.Signed {
		t.Errorf("trace value %#v, want short -7", rec.Items[1].Value)
	}
	if r.printa["k"] != 2 || r.printa["j"] != 1 || len(r.printa) != 2 {
		t.Errorf("printa snapshot %v, want k=2 j=1", r.printa)
	}
	if rec.Items[4].N != 3 {
		t.Errorf("exit item N=%d, want 3", rec.Items[4].N)
	}

	if len(r.final) != 1 || !r.final[0].Printed || r.final[0].Len() != 2 {
		t.Fatalf("final aggregations %+v", r.final)
	}
	for _, e := range r.final[0].Entries() {
		if v := r.final[0].Result(e).(program.Int).Int64(); v != 0 {
			t.Errorf("after clear(): %v = %d, want 0", e.Key, v)
		}
	}
}
