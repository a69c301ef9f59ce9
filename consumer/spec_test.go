//go:build linux

package consumer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/provider"
)

// eventLog writes each event it gets as a line.
type eventLog struct {
	output.Nop
	b strings.Builder
}

func (l *eventLog) Begin(r *output.Record) error {
	fmt.Fprintf(&l.b, "begin cpu=%d clause=%d spec=%d data=%v\n", r.CPU, r.Clause, r.Spec, r.Data)
	return nil
}

func (l *eventLog) Item(r *output.Record, it *output.Item) error {
	fmt.Fprintf(&l.b, "%v", it.Kind)
	for _, a := range it.Args {
		fmt.Fprintf(&l.b, " %v", a)
	}
	if it.Kind == program.ActCommit || it.Kind == program.ActDiscard {
		fmt.Fprintf(&l.b, " %d", it.N)
	}
	l.b.WriteByte('\n')
	return nil
}

func (l *eventLog) End(r *output.Record) error {
	fmt.Fprintf(&l.b, "end items=%d\n", len(r.Items))
	return nil
}

// Speculative records are held until commit() hands them over, nested
// after the commit item, or discard() drops them; what exceeds specsize
// is counted as a speculative drop.
func TestSpeculations(t *testing.T) {
	printf := []program.Record{
		{Action: program.ActPrintf, FormatID: 0, AggID: -1, NArgs: 1},
		{Action: program.ActArg, Offset: 16, Size: 8, Kind: program.KindSigned, AggID: -1, FormatID: -1},
	}
	end := func(a program.Action) []program.Record {
		return []program.Record{{Action: a, Offset: 16, Size: 8, AggID: -1, FormatID: -1}}
	}
	spec := &program.Spec{
		Formats: []string{"%d"},
		Clauses: []*program.ClauseSpec{
			{Segments: []*program.RecordSpec{{Records: printf, Size: 24, First: true}}},
			{Segments: []*program.RecordSpec{{Records: end(program.ActCommit), Size: 24, First: true}}},
			{Segments: []*program.RecordSpec{{Records: end(program.ActDiscard), Size: 24, First: true}}},
		},
	}
	l := &eventLog{}
	c := New(Config{
		Spec:     spec,
		EPID:     func(epid uint32) (uint32, int, bool) { return 1, int(epid) - 1, epid >= 1 && epid <= 3 },
		Probes:   oneProbe{&provider.Probe{ID: 1, Provider: "dtrace", Name: "BEGIN"}},
		Settings: output.Settings{SpecSize: 60},
	})
	c.r = l
	rec := func(epid, specID uint32, v uint64) []byte {
		b := make([]byte, 24)
		le.PutUint32(b[0:], epid)
		le.PutUint32(b[4:], specID)
		le.PutUint64(b[16:], v)
		return b
	}
	for _, r := range []struct {
		cpu  int
		data []byte
	}{
		{0, rec(1, 1, 10)}, // held by speculation 1
		{1, rec(1, 1, 11)},
		{0, rec(1, 1, 12)}, // beyond specsize (60): a drop
		{0, rec(1, 2, 20)}, // held by speculation 2
		{0, rec(1, 0, 5)},  // not speculative
		{0, rec(3, 0, 2)},  // discard(2)
		{1, rec(2, 0, 1)},  // commit(1)
		{0, rec(2, 0, 1)},  // commit(1) again: nothing left
	} {
		if err := c.record(r.cpu, r.data); err != nil {
			t.Fatal(err)
		}
	}
	want := `begin cpu=0 clause=0 spec=0 data=true
printf {5 8 true}
end items=1
begin cpu=0 clause=2 spec=0 data=false
discard 2
end items=1
begin cpu=1 clause=1 spec=0 data=false
commit 1
begin cpu=0 clause=0 spec=1 data=true
printf {10 8 true}
end items=1
begin cpu=1 clause=0 spec=1 data=true
printf {11 8 true}
end items=1
end items=1
begin cpu=0 clause=1 spec=0 data=false
commit 1
end items=1
`
	if got := l.b.String(); got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
	if c.specDrops != 1 {
		t.Errorf("speculative drops %d, want 1", c.specDrops)
	}
	if len(c.specs) != 0 {
		t.Errorf("speculations still held: %v", c.specs)
	}
}
