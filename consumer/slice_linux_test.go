package consumer

import (
	"testing"
	"time"
)

// TestSliceKeepsOrder: a drain whose slice is spent leaves the rest
// queued, in order, for the next (Pending says so); every record comes
// once, CPU by CPU in the order sent, whichever CPU each drain starts at;
// the chunks a drain stopped inside are reused whole.
func TestSliceKeepsOrder(t *testing.T) {
	e := newEmitter(t)
	b := open(t, e, BufferOptions{Size: 1 << 20})
	hi := lastCPU(t, b)
	const n = 2000
	for i := range n {
		e.emit(t, []int{0, hi}[i%2], 64, uint64(i))
	}
	b.SetSlice(time.Nanosecond)
	var out []got
	calls := 0
	for {
		calls++
		if err := b.Drain(collect(t, &out)); err != nil {
			t.Fatal(err)
		}
		if !b.Pending() {
			break
		}
	}
	if len(out) != n || calls < 10 {
		t.Fatalf("%d records in %d drains, want %d in many", len(out), calls, n)
	}
	last := map[int]int64{0: -1, hi: -1}
	for _, g := range out {
		if int64(g.seq) <= last[g.cpu] {
			t.Fatalf("record %d of CPU %d after %d", g.seq, g.cpu, last[g.cpu])
		}
		last[g.cpu] = int64(g.seq)
	}
	for _, c := range b.cpus {
		if c == nil {
			continue
		}
		for _, ch := range c.spare {
			if cap(ch) != chunkSize {
				t.Errorf("CPU %d: a spare chunk of %d bytes, want %d", c.cpu, cap(ch), chunkSize)
			}
		}
	}
}

// TestDiscardBacklog: what the backlog and the kernel rings hold is
// dropped and counted per CPU.
func TestDiscardBacklog(t *testing.T) {
	e := newEmitter(t)
	b := open(t, e, BufferOptions{Size: 1 << 20})
	for i := range 300 {
		e.emit(t, 0, 64, uint64(i))
	}
	b.SetSlice(time.Nanosecond)
	var out []got
	if err := b.Drain(collect(t, &out)); err != nil {
		t.Fatal(err)
	}
	if !b.Pending() || len(out) == 0 || len(out) >= 300 {
		t.Fatalf("%d records delivered by a sliced drain, pending %v", len(out), b.Pending())
	}
	e.emit(t, 0, 64, 300) // in the kernel ring, not yet copied out
	b.DiscardBacklog()
	if b.Pending() {
		t.Fatal("still pending")
	}
	if d := b.Drops(); len(d) != 1 || d[0].CPU != 0 || d[0].Count != uint64(301-len(out)) {
		t.Fatalf("drops %+v, want %d on CPU 0", d, 301-len(out))
	}
}

// TestRecordSeq: a record's RecordSeq is at most the Seq read after it
// was written, and more than one read before.
func TestRecordSeq(t *testing.T) {
	e := newEmitter(t)
	b := open(t, e, BufferOptions{Size: 1 << 20})
	before := b.Seq()
	e.emit(t, 0, 64, 0)
	after := b.Seq()
	var seqs []uint64
	if err := b.Drain(func(int, []byte) error { seqs = append(seqs, b.RecordSeq()); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seqs) != 1 || seqs[0] <= before || seqs[0] <= after {
		t.Fatalf("record seq %v; Seq %d before the record, %d after it but before it was read", seqs, before, after)
	}
	if now := b.Seq(); seqs[0] > now {
		t.Fatalf("record seq %d above Seq %d read after it", seqs[0], now)
	}
}
