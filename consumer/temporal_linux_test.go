package consumer

import (
	"fmt"
	"testing"
	"time"
)

// Under Temporal, records sent to two CPUs in turn come out in the order
// they were sent, across Drains and Flush; without it a Drain gives each
// CPU's records together.
func TestTemporalOrder(t *testing.T) {
	for _, policy := range []Policy{PolicySwitch, PolicyFill} {
		t.Run(policy.String(), func(t *testing.T) {
			e := newEmitter(t)
			b := open(t, e, BufferOptions{Size: 1 << 16, Policy: policy, Temporal: true})
			hi := lastCPU(t, b)
			if hi == 0 {
				t.Skip("needs two CPUs")
			}
			var out []got
			for i := range 40 {
				cpu := 0
				if i%3 != 1 {
					cpu = hi
				}
				e.emit(t, cpu, 16, uint64(i))
				if i%7 == 0 {
					if err := b.Drain(collect(t, &out)); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := b.Flush(collect(t, &out)); err != nil {
				t.Fatal(err)
			}
			inOrder(t, out, 40)
		})
	}
}

// A Drain holds back what a CPU that sent nothing could still precede: a
// record newer than the drain's start less temporalSlack waits for a
// later drain.
func TestTemporalHoldsBack(t *testing.T) {
	e := newEmitter(t)
	b := open(t, e, BufferOptions{Size: 1 << 16, Temporal: true})
	if lastCPU(t, b) == 0 {
		t.Skip("needs two CPUs")
	}
	e.emit(t, 0, 16, 0)
	var out []got
	if err := b.Drain(collect(t, &out)); err != nil {
		t.Fatal(err)
	}
	if len(out) != 0 {
		t.Fatalf("a fresh record was delivered at once: %+v", out)
	}
	time.Sleep(temporalSlack + 20*time.Millisecond)
	if err := b.Drain(collect(t, &out)); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 {
		t.Fatalf("%d records after the slack passed, want 1", len(out))
	}
}

// An error from the handler stops delivery; the records after the one
// that failed come with the next call.
func TestTemporalHandlerError(t *testing.T) {
	e := newEmitter(t)
	b := open(t, e, BufferOptions{Size: 1 << 16, Temporal: true})
	for i := range 3 {
		e.emit(t, 0, 16, uint64(i))
	}
	var out []got
	keep := collect(t, &out)
	fail := func(cpu int, data []byte) error {
		keep(cpu, data)
		return fmt.Errorf("stop")
	}
	if err := b.Flush(fail); err == nil || len(out) != 1 {
		t.Fatalf("Flush: %v, %d records; want the error after 1", err, len(out))
	}
	if err := b.Flush(keep); err != nil || len(out) != 3 || out[2].seq != 2 {
		t.Fatalf("second Flush: %v, %+v", err, out)
	}
}
