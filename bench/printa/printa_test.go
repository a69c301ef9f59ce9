// Package printa measures printa() of large aggregations: the consumer's
// sorting and formatting of one million keys, as dtrace(1M)'s text
// renderer prints them (go test -bench . -benchmem ./bench/printa).
package printa

import (
	"io"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/text"
	"github.com/dtrace-go/dtrace/program"
)

// keys is how many entries each benchmark aggregation holds.
const keys = 1_000_000

// build returns an aggregation of fn with keys entries, keyed by an
// integer or by a name and a pid, with values (and for count() the
// increments) scattered so that the sort has all its work to do.
func build(fn program.AggFunc, strKey bool) *aggregate.Agg {
	d := &aggregate.Desc{ID: 1, Func: fn}
	a := aggregate.New(d)
	slots := make([]int64, d.NSlots())
	names := []string{"bash", "sshd", "systemd-journal", "postgres", "kworker/0:1"}
	for n := range keys {
		// Keys arrive in no order, as from the kernel's hash map.
		i := n * 7919 % keys
		v := int64(i*7919) % 100003
		clear(slots)
		d.Update(slots, v, 1+v%97)
		key := []program.Value{program.I64(int64(i))}
		if strKey {
			key = []program.Value{program.String(names[i%len(names)]), program.I32(int32(i))}
		}
		a.Add(key, slots)
	}
	return a
}

func benchPrinta(b *testing.B, a *aggregate.Agg) {
	r := text.New(text.Config{Out: io.Discard, Settings: output.Settings{StrSize: 256}})
	it := &output.Item{Kind: program.ActPrinta, Aggs: []*aggregate.Agg{a}}
	rec := &output.Record{}
	// Collect the building's garbage now, not on the clock.
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for range b.N {
		if err := r.Item(rec, it); err != nil {
			b.Fatal(err)
		}
		if err := r.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuTime(b) - cpu0
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/keys, "ns/key")
	// CPU time (user and system, all threads: the garbage collector's
	// too) is what a shared, busy machine disturbs least.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's user and system time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPrintaCount1M is printa(@) of @[i] = count() over 1M keys.
func BenchmarkPrintaCount1M(b *testing.B) { benchPrinta(b, build(program.AggCount, false)) }

// BenchmarkPrintaSumStr1M is printa(@) of @[name, pid] = sum(v): string
// and 32-bit keys.
func BenchmarkPrintaSumStr1M(b *testing.B) { benchPrinta(b, build(program.AggSum, true)) }
