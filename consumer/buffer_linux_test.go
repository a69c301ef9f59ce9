package consumer

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

const valSize = 4096

// emitter is a raw tracepoint program that, run with ctx {n, seq}, sends
// an n-byte record: seq in the first 8 bytes, then pattern bytes.
type emitter struct {
	buf  *ebpf.Map
	prog *ebpf.Program
}

func pattern(i int) byte { return byte(i % 251) }

func newEmitter(t testing.TB) *emitter {
	t.Helper()
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		t.Fatal(err)
	}
	buf, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray, MaxEntries: uint32(ncpu)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { buf.Close() })
	val, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: valSize, MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { val.Close() })
	v := make([]byte, valSize)
	for i := range v {
		v[i] = pattern(i)
	}
	vs := make([][]byte, ncpu)
	for i := range vs {
		vs[i] = v
	}
	if err := val.Put(uint32(0), vs); err != nil {
		t.Fatal(err)
	}
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.StoreImm(asm.RFP, -4, 0, asm.Word),
		asm.LoadMapPtr(asm.R1, val.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.Mov.Reg(asm.R4, asm.R0),
		asm.LoadMem(asm.R1, asm.R6, 8, asm.DWord),
		asm.StoreMem(asm.R4, 0, asm.R1, asm.DWord),
		asm.LoadMem(asm.R5, asm.R6, 0, asm.DWord),
		asm.JLT.Imm(asm.R5, 8, "out"),
		asm.JGT.Imm(asm.R5, valSize, "out"),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.LoadMapPtr(asm.R2, buf.FD()),
		asm.LoadImm(asm.R3, 0xffffffff, asm.DWord),
		asm.FnPerfEventOutput.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.RawTracepoint, Instructions: insns, License: "GPL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prog.Close() })
	return &emitter{buf: buf, prog: prog}
}

func (e *emitter) emit(t testing.TB, cpu int, n int, seq uint64) {
	t.Helper()
	ctx := []uint64{uint64(n), seq + 1} // the first 4 bytes act as the EPID, never 0
	if _, err := e.prog.Run(&ebpf.RunOptions{Context: ctx, CPU: uint32(cpu), Flags: 1 /* BPF_F_TEST_RUN_ON_CPU */}); err != nil {
		t.Fatal(err)
	}
}

type got struct {
	cpu int
	seq uint64
	n   int
}

// collect returns a handler that checks each record's bytes and keeps it.
// drain returns the records one Drain or Flush (take) delivers, failing
// the test on an error.
func drain(t *testing.T, take func(Handler) error) []got {
	t.Helper()
	var out []got
	if err := take(collect(t, &out)); err != nil {
		t.Fatal(err)
	}
	return out
}

func collect(t *testing.T, out *[]got) Handler {
	return func(cpu int, data []byte) error {
		if len(data) < 8 {
			return fmt.Errorf("record of %d bytes", len(data))
		}
		seq := binary.LittleEndian.Uint64(data) - 1
		// The last 7 bytes may be padding the kernel added.
		for i := 8; i < len(data)-7; i++ {
			if data[i] != pattern(i) {
				return fmt.Errorf("record %d byte %d = %d, want %d", seq, i, data[i], pattern(i))
			}
		}
		*out = append(*out, got{cpu, seq, len(data)})
		return nil
	}
}

func open(t *testing.T, e *emitter, opts BufferOptions) *Buffers {
	t.Helper()
	b, err := OpenBuffers(e.buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// inOrder checks that out holds records 0 to n-1 in the order they were
// sent.
func inOrder(t *testing.T, out []got, n int) {
	t.Helper()
	if len(out) != n {
		t.Fatalf("%d records, want %d", len(out), n)
	}
	for i, g := range out {
		if g.seq != uint64(i) {
			t.Fatalf("record %d = %+v: not in time order", i, g)
		}
	}
}

func lastCPU(t *testing.T, b *Buffers) int {
	cpus := b.CPUs()
	return cpus[len(cpus)-1]
}

func TestSwitchOrderAndWrap(t *testing.T) {
	e := newEmitter(t)
	b := open(t, e, BufferOptions{Size: 4096})
	if b.RingSize() != 4096 {
		t.Fatalf("ring size %d", b.RingSize())
	}
	hi := lastCPU(t, b)
	// Interleave CPUs: delivery is per CPU in CPU order.
	e.emit(t, hi, 16, 100)
	e.emit(t, 0, 16, 1)
	e.emit(t, hi, 16, 101)
	e.emit(t, 0, 16, 2)
	out := drain(t, b.Drain)
	want := []uint64{1, 2, 100, 101}
	if hi == 0 {
		want = []uint64{100, 1, 101, 2}
	}
	if len(out) != 4 {
		t.Fatalf("got %+v", out)
	}
	for i, g := range out {
		if g.seq != want[i] {
			t.Fatalf("order %+v, want seqs %v", out, want)
		}
	}
	// Many odd-sized records through a one-page ring: they wrap around
	// its end and must come out intact.
	out = nil
	seq := uint64(0)
	for round := 0; round < 40; round++ {
		for k := 0; k < 3; k++ {
			e.emit(t, 0, 300+round*7+k, seq)
			seq++
		}
		if err := b.Drain(collect(t, &out)); err != nil {
			t.Fatal(err)
		}
	}
	if len(out) != int(seq) {
		t.Fatalf("%d records, want %d", len(out), seq)
	}
	for i, g := range out {
		if g.seq != uint64(i) || g.n < 300 {
			t.Fatalf("record %d = %+v", i, g)
		}
	}
	if d := b.Drops(); len(d) != 0 {
		t.Fatalf("drops %+v", d)
	}
}

func TestSwitchDrops(t *testing.T) {
	e := newEmitter(t)
	b := open(t, e, BufferOptions{Size: 4096})
	// 1000-byte records: 4 fit in a page, 6 are lost.
	for i := 0; i < 10; i++ {
		e.emit(t, 0, 1000, uint64(i))
	}
	out := drain(t, b.Drain)
	// The kernel reports a loss only in front of the next record that
	// fits: without Sync the drops are not known yet.
	if d := b.Drops(); len(d) != 0 {
		t.Fatalf("drops before Sync %+v", d)
	}
	if err := b.Flush(collect(t, &out)); err != nil {
		t.Fatal(err)
	}
	if len(out) != 4 {
		t.Fatalf("records %+v (Sync markers must not be delivered)", out)
	}
	d := b.Drops()
	if len(d) != 1 || d[0].CPU != 0 || d[0].Count != 6 {
		t.Fatalf("drops %+v, want 6 on CPU 0", d)
	}
	if d := b.Drops(); len(d) != 0 {
		t.Fatalf("drops not reset: %+v", d)
	}
}

func TestFill(t *testing.T) {
	e := newEmitter(t)
	b := open(t, e, BufferOptions{Size: 100, Policy: PolicyFill, Charge: func([]byte) int { return 30 }})
	for i := 0; i < 5; i++ {
		e.emit(t, 0, 16, uint64(i))
	}
	out := drain(t, b.Drain)
	if len(out) != 3 || !b.Filled() {
		t.Fatalf("records %+v filled %v; want 3 and filled", out, b.Filled())
	}
	if d := b.Drops(); len(d) != 1 || d[0].Count != 2 {
		t.Fatalf("drops %+v", d)
	}
}

func TestFillReserveForEnd(t *testing.T) {
	e := newEmitter(t)
	b := open(t, e, BufferOptions{Size: 100, Reserve: 40, Policy: PolicyFill, Charge: func([]byte) int { return 30 }})
	for i := 0; i < 4; i++ { // 2 fit below the reserve
		e.emit(t, 0, 16, uint64(i))
	}
	out := drain(t, b.Drain)
	if len(out) != 2 || !b.Filled() {
		t.Fatalf("before END: %+v filled %v", out, b.Filled())
	}
	b.Ending()
	for i := 10; i < 13; i++ { // one END record fits in the reserve
		e.emit(t, 0, 16, uint64(i))
	}
	if err := b.Flush(collect(t, &out)); err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || out[2].seq != 10 {
		t.Fatalf("after END: %+v, want records 0, 1, 10", out)
	}
	if d := b.Drops(); len(d) != 1 || d[0].Count != 4 {
		t.Fatalf("drops %+v, want 4", d)
	}
}

func TestRing(t *testing.T) {
	e := newEmitter(t)
	b := open(t, e, BufferOptions{Size: 100, Policy: PolicyRing, Charge: func([]byte) int { return 30 }})
	var out []got
	for i := 0; i < 10; i++ {
		e.emit(t, 0, 16, uint64(i))
		if err := b.Drain(collect(t, &out)); err != nil {
			t.Fatal(err)
		}
	}
	if len(out) != 0 {
		t.Fatalf("ring delivered before Flush: %+v", out)
	}
	if err := b.Flush(collect(t, &out)); err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || out[0].seq != 7 || out[2].seq != 9 {
		t.Fatalf("flushed %+v, want the newest 3 (7, 8, 9)", out)
	}
}

func TestPollWake(t *testing.T) {
	e := newEmitter(t)
	b := open(t, e, BufferOptions{Size: 8192})
	// Poll with a short timeout delivers what is there.
	e.emit(t, 0, 16, 5)
	var out []got
	if err := b.Poll(10*time.Millisecond, collect(t, &out)); err != nil || len(out) != 1 {
		t.Fatalf("Poll = %v, %+v", err, out)
	}
	done := make(chan error, 1)
	go func() { done <- b.Poll(-1, collect(t, &out)) }()
	time.Sleep(10 * time.Millisecond)
	b.Wake()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wake did not end Poll")
	}
	b.Close()
	if err := b.Drain(collect(t, &out)); err == nil {
		t.Fatal("Drain after Close did not fail")
	}
}

// BenchmarkDrain measures delivering 64-byte records from a kernel ring
// to a handler (the emitting test runs are excluded from the timing).
func BenchmarkDrain(b *testing.B) {
	e := newEmitter(b)
	bufs, err := OpenBuffers(e.buf, BufferOptions{Size: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer bufs.Close()
	n := 0
	h := func(int, []byte) error { n++; return nil }
	const batch = 1000
	b.SetBytes(64)
	for done := 0; done < b.N; done += batch {
		b.StopTimer()
		for i := 0; i < batch; i++ {
			e.emit(b, 0, 64, uint64(i))
		}
		b.StartTimer()
		if err := bufs.Drain(h); err != nil {
			b.Fatal(err)
		}
	}
	if n < b.N {
		b.Fatalf("delivered %d of %d", n, b.N)
	}
}

// With Start, each CPU's reader copies its kernel ring out as soon as
// it passes the wakeup mark, without Drain: far more records than the
// ring holds go through it without a drop, and come out in order.
func TestReadersEmptyTheRing(t *testing.T) {
	e := newEmitter(t)
	b := open(t, e, BufferOptions{Size: 4096})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	c := b.cpus[0]
	const n = 200 // 1500-byte records: 2 fit in the ring, 1 passes the mark
	for i := 0; i < n; i++ {
		e.emit(t, 0, 1500, uint64(i))
		// Wait for the reader (the ring holds one record at most).
		deadline := time.Now().Add(10 * time.Second)
		for atomic.LoadUint64(&c.meta.dataTail) != atomic.LoadUint64(&c.meta.dataHead) {
			if time.Now().After(deadline) {
				t.Fatalf("record %d: the reader did not copy the ring out", i)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	out := drain(t, b.Flush)
	if len(out) != n {
		t.Fatalf("%d records, want %d", len(out), n)
	}
	for i, g := range out {
		if g.seq != uint64(i) {
			t.Fatalf("record %d = %+v", i, g)
		}
	}
	if d := b.Drops(); len(d) != 0 {
		t.Fatalf("drops %+v", d)
	}
	// Poll returns when a reader has copied records out.
	e.emit(t, 0, 1500, n)
	out = nil
	if err := b.Poll(10*time.Second, collect(t, &out)); err != nil || len(out) != 1 {
		t.Fatalf("Poll = %v, %+v", err, out)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

// A reader holds at most Backlog bytes; beyond it the kernel drops, and
// every record is delivered or counted.
func TestReadersBacklogBound(t *testing.T) {
	e := newEmitter(t)
	b := open(t, e, BufferOptions{Size: 4096, Backlog: 3000})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	const n = 100
	for i := 0; i < n; i++ {
		e.emit(t, 0, 1000, uint64(i))
	}
	time.Sleep(50 * time.Millisecond)
	c := b.cpus[0]
	c.qmu.Lock()
	queued := c.queued
	c.qmu.Unlock()
	if queued > 3000+4096 {
		t.Fatalf("backlog %d bytes, bound 3000 (+ one ring)", queued)
	}
	out := drain(t, b.Flush)
	var dropped uint64
	for _, d := range b.Drops() {
		dropped += d.Count
	}
	if len(out) == n || uint64(len(out))+dropped != n {
		t.Fatalf("%d delivered + %d dropped, want %d with drops", len(out), dropped, n)
	}
}

// Ring policy: at Flush the CPUs' records come out merged in the order
// they were sent.
func TestRingTimeOrder(t *testing.T) {
	e := newEmitter(t)
	b := open(t, e, BufferOptions{Size: 4096, Policy: PolicyRing})
	hi := lastCPU(t, b)
	for i := 0; i < 20; i++ {
		cpu := 0
		if i%3 == 1 {
			cpu = hi
		}
		e.emit(t, cpu, 16, uint64(i))
		if i%5 == 0 {
			if err := b.Drain(func(int, []byte) error { return fmt.Errorf("delivered before Flush") }); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := drain(t, b.Flush)
	inOrder(t, out, 20)
	if err := b.Flush(collect(t, &out)); err != nil || len(out) != 20 {
		t.Fatalf("second Flush: %v, %d records", err, len(out))
	}
}

// Under the ring policy a CPU's backlog is a fixed pool of chunks
// allocated at the start: a late consumer makes the records wait in the
// kernel ring rather than the backlog allocate, and nothing is lost.
func TestRingBacklogPool(t *testing.T) {
	e := newEmitter(t)
	b := open(t, e, BufferOptions{Size: 1 << 20, Policy: PolicyRing})
	c := b.cpus[0]
	first := map[*byte]bool{}
	for _, sp := range c.spare {
		first[&sp[:1][0]] = true
	}
	if len(first) != ringPool {
		t.Fatalf("%d chunks at the start, want %d", len(first), ringPool)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	const n = 3000 // 12m: more than the pool holds
	for i := 0; i < n; i++ {
		e.emit(t, 0, 4000, uint64(i))
	}
	time.Sleep(100 * time.Millisecond)
	c.qmu.Lock()
	chunks := append([][]byte{}, c.spare...)
	for _, ch := range c.queue {
		chunks = append(chunks, ch.data)
	}
	queued := c.queued
	c.qmu.Unlock()
	if queued == 0 || queued > ringPool*chunkSize {
		t.Errorf("backlog of %d bytes, want some, at most %d", queued, ringPool*chunkSize)
	}
	for _, ch := range chunks {
		if cap(ch) != chunkSize || !first[&ch[:1][0]] {
			t.Fatalf("a chunk of %d bytes not in the pool", cap(ch))
		}
	}
	out := drain(t, b.Flush)
	if len(out) == 0 || out[len(out)-1].seq != n-1 {
		t.Fatalf("%d records kept, the last %+v; want the newest, %d", len(out), out[len(out)-1], n-1)
	}
	for i := 1; i < len(out); i++ {
		if out[i].seq != out[i-1].seq+1 {
			t.Fatalf("records %+v then %+v: one lost", out[i-1], out[i])
		}
	}
	if len(c.queue)+len(c.spare) != ringPool {
		t.Errorf("%d chunks after the drain, want %d", len(c.queue)+len(c.spare), ringPool)
	}
}

// TestBoundSizesRing checks that a bound on a program's records sizes the
// kernel rings (twice the bound, in pages) below bufsize, that the records
// still arrive whole, and that Stamp, whose rings also carry the system's
// task events, keeps bufsize.
func TestBoundSizesRing(t *testing.T) {
	e := newEmitter(t)
	page := os.Getpagesize()
	for _, tc := range []struct {
		name  string
		opts  BufferOptions
		pages int
	}{
		{"bound", BufferOptions{Size: 1 << 20, Bound: 3 * 128}, 1},
		{"bound of pages", BufferOptions{Size: 1 << 20, Bound: 3 * page}, 8},
		{"bufsize smaller", BufferOptions{Size: page, Bound: 3 * page}, 1},
		{"stamp", BufferOptions{Size: 1 << 20, Bound: 3 * 128, Stamp: true}, (1 << 20) / page},
	} {
		b, err := OpenBuffers(e.buf, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range b.cpus {
			if c != nil && len(c.data) != tc.pages*page {
				t.Errorf("%s: CPU %d ring holds %d bytes, want %d pages", tc.name, c.cpu, len(c.data), tc.pages)
			}
		}
		for i := 0; i < 3; i++ {
			e.emit(t, 0, 64, uint64(i))
		}
		var got int
		if err := b.Drain(func(_ int, rec []byte) error {
			if len(rec) >= 64 {
				got++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if got != 3 {
			t.Errorf("%s: %d of 3 records drained", tc.name, got)
		}
		b.Close()
	}
}
