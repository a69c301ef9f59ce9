package aggregate

import "github.com/dtrace-go/dtrace/program"

// Desc describes one aggregation variable as the compiled program does
// (program.AggDesc, whose value converts to a Desc); this package adds
// what user space does with its values: merge, sort, print.
type Desc program.AggDesc

// NSlots returns the number of int64 slots in the function's per-CPU
// value (see the package documentation for the layouts).
func (d *Desc) NSlots() int { return (*program.AggDesc)(d).NSlots() }

// Update applies one firing of the aggregating function with argument v
// (and increment incr for the quantizing functions) to a per-CPU value,
// as the code codegen emits does.
func (d *Desc) Update(slots []int64, v, incr int64) { (*program.AggDesc)(d).Update(slots, v, incr) }

func (d *Desc) llqValid() bool { return (*program.AggDesc)(d).LlqValid() }
func (d *Desc) llqZero() int   { return (*program.AggDesc)(d).LlqZero() }
func (d *Desc) llqBins() int   { return (*program.AggDesc)(d).LlqBins() }

func ipow(b, e uint64) uint64 {
	r := uint64(1)
	for ; e > 0; e-- {
		r *= b
	}
	return r
}
