//go:build linux

package consumer

import (
	"bufio"
	"io"

	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/text"
	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/provider"
)

type oneProbe struct{ p *provider.Probe }

func (o oneProbe) Probe(id uint32) *provider.Probe {
	if id == o.p.ID {
		return o.p
	}
	return nil
}

// printfConsumer is a consumer of one clause, printf("%d %s\n", int,
// string[16]), and a record of it.
func printfConsumer(r output.Renderer) (*Consumer, []byte) {
	recs := []program.Record{
		{Action: program.ActPrintf, FormatID: 0, AggID: -1, NArgs: 2},
		{Action: program.ActArg, Offset: 16, Size: 4, Kind: program.KindSigned, AggID: -1, FormatID: -1},
		{Action: program.ActArg, Offset: 20, Size: 16, Kind: program.KindString, AggID: -1, FormatID: -1},
	}
	spec := &program.Spec{
		Formats: []string{"%d %s\n"},
		Clauses: []*program.ClauseSpec{{Segments: []*program.RecordSpec{{Records: recs, Size: 36, First: true}}}},
	}
	c := New(Config{
		Spec: spec,
		EPID: func(epid uint32) (uint32, int, bool) {
			return 5, 0, epid == 1
		},
		Probes: oneProbe{&provider.Probe{ID: 5, Provider: "syscall", Function: "read", Name: "entry"}},
	})
	c.r = r
	data := make([]byte, 40)
	le.PutUint32(data[0:], 1)
	le.PutUint32(data[16:], uint32(0xfffffff9))
	copy(data[20:], "hello")
	return c, data
}

type itemRecorder struct {
	output.Nop
	args []program.Value
	rec  output.Record
}

func (r *itemRecorder) Item(rec *output.Record, it *output.Item) error {
	r.rec = *rec
	r.args = append([]program.Value(nil), it.Args...)
	return nil
}

func TestDecodePrintfRecord(t *testing.T) {
	r := &itemRecorder{}
	c, data := printfConsumer(r)
	if err := c.record(2, data); err != nil {
		t.Fatal(err)
	}
	if r.rec.CPU != 2 || r.rec.EPID != 1 || !r.rec.Known || r.rec.Probe.Function != "read" || !r.rec.First || !r.rec.Data {
		t.Errorf("record %+v", r.rec)
	}
	if len(r.args) != 2 || r.args[0] != (program.Int{Bits: 0xfffffff9, Size: 4, Signed: true}) || r.args[1] != program.String("hello") {
		t.Errorf("args %#v", r.args)
	}
	// An EPID the plan does not know is an error, not a panic.
	le.PutUint32(data[0:], 7)
	if err := c.record(0, data); err == nil {
		t.Error("unknown EPID accepted")
	}
}

// BenchmarkPrintfRecord measures decoding one printf() record into its
// event (issue 10 wants millions a second through the consumer).
func BenchmarkPrintfRecord(b *testing.B) {
	benchPrintf(b, output.Nop{}, nil)
}

// BenchmarkPrintfText measures a printf() record from its bytes to its
// text: decoding, the action and dtrace(1M)'s rendering into a buffered
// writer, as the command does for each record of a stream.
func BenchmarkPrintfText(b *testing.B) {
	w := bufio.NewWriterSize(io.Discard, 64<<10)
	r := text.New(text.Config{Out: w, Settings: output.Settings{Quiet: true, StrSize: 256}})
	benchPrintf(b, r, func() { w.Flush() })
}

// benchPrintf decodes b.N printf() records (each with its own value)
// through r, runs done (if not nil) and reports the CPU rate.
func benchPrintf(b *testing.B, r output.Renderer, done func()) {
	c, data := printfConsumer(r)
	b.ReportAllocs()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		le.PutUint32(data[16:], uint32(i))
		if err := c.record(0, data); err != nil {
			b.Fatal(err)
		}
	}
	if done != nil {
		done()
	}
	reportCPURate(b, cpu0)
}

// cpuTime is the process's CPU time (user + system).
func cpuTime() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPURate reports records per second of CPU time since cpu0: on a
// loaded machine the wall time per op says more about the other tasks.
func reportCPURate(b *testing.B, cpu0 time.Duration) {
	if d := cpuTime() - cpu0; d > 0 {
		b.ReportMetric(float64(b.N)/d.Seconds()/1e6, "Mrec/cpu-s")
	}
}
