package json

import (
	"bytes"
	"encoding/json"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/output"
)

// Collector types each record's actions as the JSON renderer does, for
// renderers that place them elsewhere (a timeline's event args, the
// agent's messages). Hand it Begin, Item and End as a Renderer gets them;
// End returns the record's actions. freopen() is not followed: what is
// collected stays with the record.
type Collector struct {
	r   *Renderer
	buf bytes.Buffer
}

// NewCollector returns a Collector; c.Out is not used.
func NewCollector(c Config) *Collector {
	k := &Collector{}
	c.Out = &k.buf
	k.r = New(c)
	return k
}

// Begin starts a record.
func (k *Collector) Begin(r *output.Record) error { return k.r.Begin(r) }

// Item types one item of the record.
func (k *Collector) Item(r *output.Record, it *output.Item) error {
	if it.Kind == output.KindFreopen {
		return nil
	}
	return k.r.Item(r, it)
}

// End ends the record and returns its actions (none for a record that
// holds no data).
func (k *Collector) End(r *output.Record) ([]Action, error) {
	k.buf.Reset()
	if err := k.r.End(r); err != nil || k.buf.Len() == 0 {
		return nil, err
	}
	var rec Record
	if err := json.Unmarshal(k.buf.Bytes(), &rec); err != nil {
		return nil, err
	}
	return rec.Actions, nil
}

// Aggregations types the aggregations printa() did not print, as the
// JSON renderer writes them at exit (without type, time and machine).
func (k *Collector) Aggregations(aggs []*aggregate.Agg) []*Aggregation {
	var out []*Aggregation
	for _, a := range aggs {
		if a != nil && !a.Printed {
			out = append(out, k.r.aggregation(a))
		}
	}
	return out
}
