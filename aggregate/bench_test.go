package aggregate

import (
	"io"
	"testing"

	"github.com/dtrace-go/dtrace/program"
)

func BenchmarkPrintQuantize(b *testing.B) {
	d := &Desc{ID: 1, Func: program.AggQuantize}
	a := New(d)
	for i := 0; i < 10000; i++ {
		slots := make([]int64, d.NSlots())
		for j := 0; j < 20; j++ {
			d.Update(slots, int64(i*j), 1)
		}
		a.Add([]program.Value{program.I64(int64(i))}, slots)
	}
	p := &Printer{}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		_ = p.PrintAll(io.Discard, []*Agg{a})
	}
}

func BenchmarkPrintSum(b *testing.B) {
	d := &Desc{ID: 1, Func: program.AggSum}
	a := New(d)
	for i := 0; i < 100000; i++ {
		a.Add([]program.Value{program.String("key"), program.I64(int64(i))}, []int64{int64(i * 7 % 1000)})
	}
	p := &Printer{}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		_ = p.PrintAll(io.Discard, []*Agg{a})
	}
}
