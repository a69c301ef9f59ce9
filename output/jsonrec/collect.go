package jsonrec

import (
	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// Collector types each record's actions as the JSON renderer does, for
// renderers that place them elsewhere (a timeline's event args, the
// agent's messages). Hand it Begin, Item and End as a Renderer gets them;
// End returns the record's actions. freopen() is not followed: what is
// collected stays with the record.
type Collector struct {
	t *Typer
	// recs holds, per nesting level (commit() nests), the record being
	// collected.
	recs []*Record
}

// NewCollector returns a Collector.
func NewCollector(c Config) *Collector { return &Collector{t: NewTyper(c)} }

// Begin starts a record.
func (k *Collector) Begin(r *output.Record) error {
	k.recs = append(k.recs, k.t.Record(r))
	return nil
}

// Item types one item of the record.
func (k *Collector) Item(r *output.Record, it *output.Item) error {
	if len(k.recs) == 0 || it.Kind == program.ActFreopen {
		return nil
	}
	a, err := k.t.Action(it)
	if err != nil {
		return err
	}
	rec := k.recs[len(k.recs)-1]
	rec.Actions = append(rec.Actions, a)
	return nil
}

// End ends the record and returns its actions (none for a record that
// holds no data).
func (k *Collector) End(r *output.Record) ([]Action, error) {
	rec, ok := output.Pop(&k.recs)
	if !ok || !r.Data {
		return nil, nil
	}
	return rec.Actions, nil
}

// Aggregations types the aggregations printa() did not print, as the
// JSON renderer writes them at exit (without type, time and machine).
func (k *Collector) Aggregations(aggs []*aggregate.Agg) []*Aggregation {
	var out []*Aggregation
	for _, a := range aggs {
		if a != nil && !a.Printed {
			out = append(out, k.t.Aggregation(a))
		}
	}
	return out
}
