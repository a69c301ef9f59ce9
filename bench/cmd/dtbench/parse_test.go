package main

import (
	"math"
	"testing"
	"time"
)

// Nothing here is timed: these tests check the harness's parsing and
// statistics on canned input.

func TestAggCountsDtrace(t *testing.T) {
	out := "\n" +
		"  bash                                                              3\n" +
		"  a b                                                              17\n" +
		"  getppid-loop                                                2000000\n"
	got := aggCounts(out)
	want := map[string]int64{"bash": 3, "a b": 17, "getppid-loop": 2000000}
	if len(got) != len(want) {
		t.Fatalf("aggCounts = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("aggCounts[%q] = %d, want %d", k, got[k], v)
		}
	}
}

func TestAggCountsBpftrace(t *testing.T) {
	out := "Attaching 2 probes...\n\n\n" +
		"@[tracepoint:syscalls:sys_enter_read]: 12\n" +
		"@[tracepoint:syscalls:sys_enter_getppid]: 1000\n" +
		"@[110]: 1003\n" +
		"@x[a b]: 4\n" +
		"@[getppid-loop]: 2000000\n"
	got := aggCounts(out)
	for k, v := range map[string]int64{
		"tracepoint:syscalls:sys_enter_getppid": 1000,
		"110":                                   1003,
		"a b":                                   4,
		"getppid-loop":                          2000000,
	} {
		if got[k] != v {
			t.Errorf("aggCounts[%q] = %d, want %d", k, got[k], v)
		}
	}
	if _, ok := got["Attaching 2 probes..."]; ok {
		t.Errorf("aggCounts took the banner for a key: %v", got)
	}
}

func TestAggCountsIgnoresOtherLines(t *testing.T) {
	out := "CPU     ID                    FUNCTION:NAME\n" +
		"  1      1                           :BEGIN \n" +
		"ready\n"
	if got := aggCounts(out); len(got) != 0 {
		t.Errorf("aggCounts = %v, want nothing", got)
	}
}

func TestFloorCount(t *testing.T) {
	if got := floorCount("ready\ncount 2000003\n"); got != 2000003 {
		t.Errorf("floorCount = %d", got)
	}
	if got := floorCount("ready\n"); got != -1 {
		t.Errorf("floorCount without a count = %d, want -1", got)
	}
}

func TestLoopTimes(t *testing.T) {
	cpu, wall, err := loopTimes("291774375 664836812\n")
	if err != nil || cpu != 291774375 || wall != 664836812 {
		t.Errorf("loopTimes = %v %v %v", cpu, wall, err)
	}
	cpu, wall, err = loopTimes("12345\n")
	if err != nil || cpu != 12345 || wall != 12345 {
		t.Errorf("loopTimes(one) = %v %v %v", cpu, wall, err)
	}
	for _, bad := range []string{"", "x", "1 2 3", "-5 3", "0"} {
		if _, _, err := loopTimes(bad); err == nil {
			t.Errorf("loopTimes(%q) did not fail", bad)
		}
	}
}

func TestMedians(t *testing.T) {
	if got := median([]time.Duration{5, 1, 3}); got != 3 {
		t.Errorf("median odd = %v", got)
	}
	if got := median([]time.Duration{4, 1, 3, 2}); got != 2 { // (2+3)/2 truncated
		t.Errorf("median even = %v", got)
	}
	if got := median(nil); got != 0 {
		t.Errorf("median(nil) = %v", got)
	}
	in := []time.Duration{3, 1, 2}
	median(in)
	if in[0] != 3 {
		t.Errorf("median sorted its argument")
	}
	if got := minimum([]time.Duration{4, 1, 3}); got != 1 {
		t.Errorf("minimum = %v", got)
	}
	if got := minimum(nil); got != 0 {
		t.Errorf("minimum(nil) = %v", got)
	}
	if got := medianInt([]int64{10, 30, 20, 40}); got != 25 {
		t.Errorf("medianInt = %d", got)
	}
	if got := medianFloat([]float64{1.5, 0.5}); got != 1 {
		t.Errorf("medianFloat = %v", got)
	}
	if !math.IsNaN(medianFloat(nil)) {
		t.Errorf("medianFloat(nil) is not NaN")
	}
}

func TestRatio(t *testing.T) {
	for _, c := range []struct {
		a, b float64
		want string
	}{
		{1, 4, "0.25x"},
		{3, 1, "3.00x"},
		{1, 0, "-"},
		{math.NaN(), 1, "-"},
		{1, math.NaN(), "-"},
	} {
		if got := ratio(c.a, c.b); got != c.want {
			t.Errorf("ratio(%v, %v) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}
