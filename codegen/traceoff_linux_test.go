//go:build linux

package codegen

import (
	"encoding/binary"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/abi"
)

// setState writes dt_state's activity and recording gate.
func (r *runner) setState(t *testing.T, activity, off uint32) {
	t.Helper()
	val := make([]byte, abi.StateSize)
	binary.LittleEndian.PutUint32(val[abi.StateActivity:], activity)
	binary.LittleEndian.PutUint32(val[abi.StateTraceOff:], off)
	if err := r.maps[abi.MapState].Put(uint32(0), val); err != nil {
		t.Fatal(err)
	}
}

// gate reads dt_state's recording gate.
func (r *runner) gate(t *testing.T) uint32 {
	t.Helper()
	var val []byte
	if err := r.maps[abi.MapState].Lookup(uint32(0), &val); err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint32(val[abi.StateTraceOff:])
}

// TestTraceoffGate: while tracing is active, the records after
// traceoff() stop until traceon(); the clause that turned tracing off
// is written whole, the clause calling traceon() too; before tracing
// is active (BEGIN) the gate lets everything through.
func TestTraceoffGate(t *testing.T) {
	needBPF(t)
	spec := compileD(t, `
BEGIN { printf("%d ", arg0); }
BEGIN /arg0 == 3/ { printf("off%d ", arg0); traceoff(); printf("still%d ", arg0); }
BEGIN /arg0 == 7/ { traceon(); printf("on%d ", arg0); }
BEGIN /arg0 == 9/ { exit(0); }
`, Options{})
	r := loadSpec(t, spec)
	run := func() string {
		var b strings.Builder
		for i := uint64(1); i <= 10; i++ {
			b.WriteString(strings.TrimSpace(render(t, spec, r.fire(t, i))))
			b.WriteString("|")
		}
		return b.String()
	}
	r.setState(t, abi.ActivityActive, 0)
	// exit()'s record goes out (it also ends tracing: activity
	// draining, where the gate lets everything through).
	if got, want := run(), "1|2|3 off3 still3||||on7|8|9 exit(0)|10|"; got != want {
		t.Errorf("active:\n got %q\nwant %q", got, want)
	}
	r.setState(t, abi.ActivityActive, 1)
	if got, want := run(), "||||||on7|8|9 exit(0)|10|"; got != want {
		t.Errorf("active, off at the start:\n got %q\nwant %q", got, want)
	}
	// Off: exit()'s record goes out (the printf before it does not).
	r.setState(t, abi.ActivityActive, 1)
	if got, want := strings.TrimSpace(render(t, spec, r.fire(t, 9))), "exit(0)"; got != want {
		t.Errorf("exit while off: got %q, want %q", got, want)
	}
	r.setState(t, abi.ActivityInactive, 0)
	if got, want := run(), "1|2|3 off3 still3|4|5|6|7 on7|8|9 exit(0)|10|"; got != want {
		t.Errorf("inactive:\n got %q\nwant %q", got, want)
	}
}

// TestTraceoffCount: traceoff(2) turns tracing off exactly twice in the
// whole run, however many CPUs fire it at once; a firing that finds
// tracing off takes no count. Each round, every CPU fires the clause
// many times together, then tracing is turned on again from outside.
func TestTraceoffCount(t *testing.T) {
	needBPF(t)
	spec := compileD(t, `BEGIN { traceoff(2); }`, Options{})
	r := loadSpec(t, spec)
	r.setState(t, abi.ActivityActive, 0)
	ncpu := min(runtime.NumCPU(), 4)
	const firings = 500
	round := func() int {
		fireOnCPUs(t, r, ncpu, firings, nil)
		return len(r.fire(t, 0)) // the records of the round, and one more firing
	}
	// Rounds 1 and 2: one firing closes the gate and is written, the
	// others find it closed. Rounds 3 and 4: the counts are used up, the
	// gate stays open and every firing is written.
	all := ncpu*firings + 1
	for i, want := range []struct {
		recs int
		gate uint32
	}{{1, 1}, {1, 1}, {all, 0}, {all, 0}} {
		if recs, gate := round(), r.gate(t); recs != want.recs || gate != want.gate {
			t.Errorf("round %d on %d CPUs: %d records, gate %d; want %d records, gate %d", i+1, ncpu, recs, gate, want.recs, want.gate)
		}
		r.setState(t, abi.ActivityActive, 0)
	}
}

// TestTraceoffRace: with traceon() right after it, traceoff(100) races
// with itself on every CPU: a firing that takes one of the counts and
// then finds another CPU closed the gate first gives it back, so that
// exactly 100 firings turn tracing off (each CPU reads its firing's
// msTraceOff from its scratch area).
func TestTraceoffRace(t *testing.T) {
	needBPF(t)
	spec := compileD(t, `BEGIN { traceoff(100); } BEGIN { traceon(); }`, Options{})
	r := loadSpec(t, spec)
	r.setState(t, abi.ActivityActive, 0)
	ncpu := min(runtime.NumCPU(), 4)
	const firings = 2000
	flips := make([]int, ncpu)
	fireOnCPUs(t, r, ncpu, firings, func(cpu int, scratch *[]byte) bool {
		if err := r.maps[abi.MapScratch].Lookup(uint32(cpu), scratch); err != nil {
			t.Error(err)
			return false
		}
		if binary.LittleEndian.Uint64((*scratch)[spec.Layout.MState+msTraceOff:]) != 0 {
			flips[cpu]++
		}
		return true
	})
	total := 0
	for _, n := range flips {
		total += n
	}
	if total != 100 {
		t.Errorf("%d firings turned tracing off (by CPU %v), want 100", total, flips)
	}
}

// fireOnCPUs runs r's program firings times on each of the first ncpu
// CPUs at once (one goroutine pinned to each, all released together, so
// that the firings race). after, if not nil, runs after each firing with
// the CPU and a buffer of the goroutine's own; false stops that CPU.
func fireOnCPUs(t *testing.T, r *runner, ncpu, firings int, after func(cpu int, scratch *[]byte) bool) {
	t.Helper()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for cpu := 0; cpu < ncpu; cpu++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var set unix.CPUSet
			set.Set(cpu)
			unix.SchedSetaffinity(0, &set)
			<-start
			ctx := make([]uint64, 10)
			var scratch []byte
			for range firings {
				if _, err := r.prog.Run(&ebpf.RunOptions{Context: ctx}); err != nil {
					t.Error(err)
					return
				}
				if after != nil && !after(cpu, &scratch) {
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
}
