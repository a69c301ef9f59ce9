package main

import (
	"bufio"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// This file is pure Go (no build tags): the parsing of the tracers'
// outputs and the statistics, tested on canned input.

// median of ds; 0 for none.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// minimum of ds; 0 for none.
func minimum(ds []time.Duration) time.Duration {
	var m time.Duration
	for i, d := range ds {
		if i == 0 || d < m {
			m = d
		}
	}
	return m
}

// medianInt of xs; 0 for none.
func medianInt(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]int64(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// medianFloat of xs; NaN for none.
func medianFloat(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// ratio a/b as "1.23x", or "-" when b is zero or either is unknown.
func ratio(a, b float64) string {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// ms formats d in milliseconds with one decimal.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// aggCounts parses the counts that a tracer printed for a one-key count()
// aggregation, keyed by the key's text. It understands dtrace's default
// aggregation output
//
//	getppid-loop                                               2000000
//
// (the key, spaces, the value; keys may hold spaces) and bpftrace's map
// output
//
//	@[getppid-loop]: 2000000
//
// Lines of any other shape are ignored.
func aggCounts(out string) map[string]int64 {
	m := make(map[string]int64)
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if strings.HasPrefix(line, "@") {
			// bpftrace: @name[key]: value, or @[key]: value
			i := strings.Index(line, "[")
			j := strings.LastIndex(line, "]: ")
			if i < 0 || j < i {
				continue
			}
			v, err := strconv.ParseInt(strings.TrimSpace(line[j+3:]), 10, 64)
			if err != nil {
				continue
			}
			m[line[i+1:j]] += v
			continue
		}
		t := strings.TrimSpace(line)
		k := strings.LastIndexAny(t, " \t")
		if k < 0 {
			continue
		}
		v, err := strconv.ParseInt(t[k+1:], 10, 64)
		if err != nil {
			continue
		}
		key := strings.TrimSpace(t[:k])
		if key == "" {
			continue
		}
		m[key] += v
	}
	return m
}

// floorCount parses the floor counter's "count N" line; -1 if absent.
func floorCount(out string) int64 {
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "count "); ok {
			if v, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64); err == nil {
				return v
			}
		}
	}
	return -1
}

// loopTimes parses the loop program's output, "CPU WALL" on one line:
// the CPU time (user+system) and the wall time of the loop, in
// nanoseconds. (A bare "WALL" is taken as both.)
func loopTimes(out string) (cpu, wall time.Duration, err error) {
	s := strings.TrimSpace(out)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	var v []int64
	for _, x := range f {
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil || n <= 0 {
			v = nil
			break
		}
		v = append(v, n)
	}
	switch len(v) {
	case 1:
		return time.Duration(v[0]), time.Duration(v[0]), nil
	case 2:
		return time.Duration(v[0]), time.Duration(v[1]), nil
	}
	return 0, 0, fmt.Errorf("loop program printed %q, want CPU and wall nanoseconds", out)
}

// verdict says whether got meets a target.
func verdict(ok bool) string {
	if ok {
		return "MET"
	}
	return "NOT MET"
}

// targets are the verdicts of the run's targets, in order, for the
// summary at the end; a target not met makes dtbench exit 1.
var targets []targetResult

type targetResult struct {
	what string
	ok   bool
}

// target records and prints a verdict.
func target(what string, ok bool) {
	targets = append(targets, targetResult{what, ok})
	fmt.Printf("   target: %s: %s\n", what, verdict(ok))
}
