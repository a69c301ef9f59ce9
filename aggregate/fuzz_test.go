package aggregate

import (
	"io"
	"testing"

	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/program"
)

// FuzzHistograms feeds arbitrary parameters and values through the
// update, merge, sort and print paths; none may panic.
func FuzzHistograms(f *testing.F) {
	f.Add(uint8(7), int32(0), uint16(10), uint16(10), uint16(0), uint16(2), uint16(20), int64(5), int64(1))
	f.Add(uint8(9), int32(-5), uint16(3), uint16(2), uint16(1), uint16(3), uint16(4), int64(-77), int64(-3))
	f.Fuzz(func(t *testing.T, fn uint8, base int32, levels, step, lmag, hmag, steps uint16, v, incr int64) {
		d := &Desc{ID: 1, Func: program.AggFunc(fn%9 + 1), Base: base, Levels: levels % 512, Step: step,
			Factor: 10, Lmag: lmag % 4, Hmag: hmag % 6, Steps: steps % 64}
		if d.NSlots() > 4096 {
			return
		}
		a := New(d)
		for cpu := 0; cpu < 2; cpu++ {
			slots := make([]int64, d.NSlots())
			d.Update(slots, v, incr)
			d.Update(slots, -v, incr)
			a.Add([]program.Value{program.I64(v % 3)}, slots)
		}
		p := &Printer{}
		_ = p.PrintAll(io.Discard, []*Agg{a})
		pf, _ := format.Parse("%d %@d\n")
		_ = p.Printa(io.Discard, pf, a, a)
		a.Trunc(1)
	})
}
