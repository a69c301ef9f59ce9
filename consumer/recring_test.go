package consumer

import (
	"encoding/binary"
	"testing"
)

// The ring keeps the newest records within its size, in order, in the
// memory it allocated first.
func TestRecRing(t *testing.T) {
	r := newRecRing(make([]byte, 200))
	rec := func(i int, n int) []byte {
		b := make([]byte, n)
		binary.LittleEndian.PutUint32(b, uint32(i))
		return b
	}
	for i := 0; i < 10; i++ {
		r.add(rec(i, 30), Stamp{Time: uint64(i)}, 30)
	}
	if r.len() != 3 {
		t.Fatalf("%d records kept, want 3", r.len())
	}
	buf := &r.buf[0]
	// Odd sizes wrap around the buffer's end.
	for i := 10; i < 1000; i++ {
		r.add(rec(i, 8+i%37), Stamp{Time: uint64(i), PID: uint32(i), TID: uint32(i) + 1}, 8+i%37)
		if r.used > 100 {
			t.Fatalf("record %d: %d bytes kept", i, r.used)
		}
	}
	if &r.buf[0] != buf {
		t.Error("the ring's buffer was allocated again")
	}
	var got []int
	for r.len() > 0 {
		b, st := r.peek()
		tm := st.Time
		if int(binary.LittleEndian.Uint32(b)) != int(tm) || len(b) != 8+int(tm)%37 || st.PID != uint32(tm) || st.TID != uint32(tm)+1 {
			t.Fatalf("record %x at time %d", b, tm)
		}
		got = append(got, int(tm))
		r.pop()
	}
	if len(got) < 2 || got[len(got)-1] != 999 {
		t.Fatalf("kept %v", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			t.Fatalf("kept %v: not the newest in order", got)
		}
	}
	// A record larger than the ring is not kept.
	r.add(rec(1, 200), Stamp{Time: 1}, 200)
	if r.len() != 0 {
		t.Error("oversized record kept")
	}
}
