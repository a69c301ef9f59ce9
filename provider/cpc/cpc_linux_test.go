package cpc_test

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/provider/ktrace/ktracetest"
)

// TestCPUClockRate: cpc:::cpu_clock-all-1000000 (an overflow every
// millisecond of each CPU's clock) counts within 10% of 1,000 a second
// per CPU over the second the program runs, measured by its own
// timestamps, while every CPU runs a busy loop. A virtual CPU's clock
// does not advance while the hypervisor runs something else (a
// descheduled vCPU's timer periods are lost, not delivered late): the
// time /proc/stat counts as stolen over that second is taken out of what
// is expected.
func TestCPUClockRate(t *testing.T) {
	var stolen float64
	out := ktracetest.Run(t, `
BEGIN { start = timestamp; }
cpc:::cpu_clock-all-1000000 { @ = count(); }
tick-1s { printa("%@d ", @); printf("%d\n", timestamp - start); exit(0); }
`, 10*time.Second, func() {
		before := cpuTimes(t)
		spin(1200 * time.Millisecond)
		after := cpuTimes(t)
		if total := after.total - before.total; total > 0 {
			stolen = float64(after.steal-before.steal) / float64(total)
		}
	})
	var n, ns int64
	if _, err := fmt.Sscan(out, &n, &ns); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	want := float64(runtime.NumCPU()) * float64(ns) / 1e6 * (1 - stolen)
	t.Logf("%d overflows in %v on %d CPUs, %.1f%% of their time stolen: %.0f expected", n, time.Duration(ns), runtime.NumCPU(), 100*stolen, want)
	if r := float64(n) / want; r < 0.9 || r > 1.1 {
		t.Errorf("%d overflows, %.0f expected (ratio %.3f)", n, want, r)
	}
}

// spin keeps every CPU busy for d.
func spin(d time.Duration) {
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for i := 0; i < runtime.NumCPU(); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
			}
		}()
	}
	wg.Wait()
}

// cpuTimesAll are the all-CPU times of /proc/stat's first line, in
// clock ticks: all of them, and the time stolen.
type cpuTimesAll struct{ total, steal uint64 }

func cpuTimes(t *testing.T) cpuTimesAll {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	var c cpuTimesAll
	// cpu user nice system idle iowait irq softirq steal guest guest_nice:
	// guest time is already in user and nice.
	for i := 1; i < len(f) && i <= 8; i++ {
		v, _ := strconv.ParseUint(f[i], 10, 64)
		c.total += v
		if i == 8 {
			c.steal = v
		}
	}
	return c
}

// TestModes: the user and kernel modes split the clock: together about
// what all counts, each of them some of it while a busy loop alternates
// between user code and system calls.
func TestModes(t *testing.T) {
	out := ktracetest.Run(t, `
cpc:::cpu_clock-user-1000000 { @u = count(); }
cpc:::cpu_clock-kernel-1000000 { @k = count(); }
cpc:::cpu_clock-all-1000000 { @a = count(); }
tick-1s { printa("%@d ", @u); printa("%@d ", @k); printa("%@d\n", @a); exit(0); }
`, 10*time.Second, nil)
	var u, k, a int64
	if _, err := fmt.Sscan(out, &u, &k, &a); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	t.Logf("user %d, kernel %d, all %d", u, k, a)
	if u+k < a*8/10 || u+k > a*12/10 || k == 0 {
		t.Errorf("user %d + kernel %d overflows, all %d", u, k, a)
	}
}
