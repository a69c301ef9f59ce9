package cpc_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/provider/ktrace/ktracetest"
)

// TestCPUClockRate: cpc:::cpu_clock-all-1000000 (an overflow every
// millisecond of each CPU's clock) counts within 10% of 1,000 a second
// per CPU over the second the program runs, measured by its own
// timestamps.
func TestCPUClockRate(t *testing.T) {
	out := ktracetest.Run(t, `
BEGIN { start = timestamp; }
cpc:::cpu_clock-all-1000000 { @ = count(); }
tick-1s { printa("%@d ", @); printf("%d\n", timestamp - start); exit(0); }
`, 10*time.Second, nil)
	var n, ns int64
	if _, err := fmt.Sscan(out, &n, &ns); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	want := float64(runtime.NumCPU()) * float64(ns) / 1e6
	t.Logf("%d overflows in %v on %d CPUs, %.0f expected", n, time.Duration(ns), runtime.NumCPU(), want)
	if r := float64(n) / want; r < 0.9 || r > 1.1 {
		t.Errorf("%d overflows, %.0f expected (ratio %.3f)", n, want, r)
	}
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
