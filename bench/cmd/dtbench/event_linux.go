//go:build linux

package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// ---------------------------------------------------------------------
// 2. per-event overhead

type eventResult struct {
	name    string
	runs    []loopRun
	diffs   []time.Duration // CPU time over the untraced runs on either side
	bad     int             // runs whose tracer did not count all M events
	counted []int64
}

// measureEvents runs the loop untraced, then under each tracer in turn
// (start it, wait for "ready", run the loop, stop it and check that it
// counted the loop's M calls), untraced again, under the next tracer, and
// so on, c.rounds times. A traced run's overhead is its CPU time minus the
// mean of the untraced runs just before and after it, which cancels the
// slow drift of a busy machine. With nr (not 0) the loop makes that
// system call instead of getppid, and counts are not checked.
func measureEvents(c *config, m int64, nr int, ts []tracer) ([]loopRun, []*eventResult, error) {
	runLoop := func(c *config, m int64) (loopRun, error) { return runLoopNR(c, m, nr) }
	if _, err := runLoop(c, m/10); err != nil { // warm-up
		return nil, nil, err
	}
	res := make([]*eventResult, len(ts))
	for i, t := range ts {
		res[i] = &eventResult{name: t.name}
	}
	u, err := runLoop(c, m)
	if err != nil {
		return nil, nil, err
	}
	base := []loopRun{u}
	for round := 0; round < c.rounds; round++ {
		for i, t := range ts {
			r, _, err := startTracer(c, t)
			if err != nil {
				return nil, nil, err
			}
			d, lerr := runLoop(c, m)
			_, _, serr := r.stop(c)
			if lerr != nil {
				return nil, nil, lerr
			}
			if errors.Is(serr, errHung) {
				fmt.Printf("   WARNING: %v\n", serr)
			} else if serr != nil {
				return nil, nil, serr
			}
			after, err := runLoop(c, m)
			if err != nil {
				return nil, nil, err
			}
			before := base[len(base)-1]
			base = append(base, after)
			n := r.count()
			res[i].runs = append(res[i].runs, d)
			res[i].diffs = append(res[i].diffs, d.cpu-(before.cpu+after.cpu)/2)
			res[i].counted = append(res[i].counted, n)
			if n < m && nr == 0 {
				res[i].bad++
			}
			if c.verbose {
				fmt.Printf("   round %d: %-36s cpu %s (wall %s), untraced around it %s %s; counted %d\n",
					round, t.name, ms(d.cpu), ms(d.wall), ms(before.cpu), ms(after.cpu), n)
			}
		}
	}
	return base, res, nil
}

// runEvents measures the tracers ts (measureEvents) and prints what
// they cost (printEvents), returning each one's overhead by name.
func runEvents(c *config, m int64, nr int, ts []tracer) (map[string]float64, error) {
	base, res, err := measureEvents(c, m, nr, ts)
	if err != nil {
		return nil, err
	}
	return printEvents(c, m, base, res), nil
}

func printEvents(c *config, m int64, base []loopRun, res []*eventResult) map[string]float64 {
	cpus := func(rs []loopRun) (cpu, wall []time.Duration) {
		for _, r := range rs {
			cpu, wall = append(cpu, r.cpu), append(wall, r.wall)
		}
		return
	}
	bc, bw := cpus(base)
	fmt.Printf("   %-36s %12s %12s %14s\n", "median", "loop CPU", "loop wall", "ns/event over")
	fmt.Printf("   %-36s %12s %12s %14s\n", "untraced", ms(median(bc)), ms(median(bw)), "")
	over := make(map[string]float64)
	for _, r := range res {
		rc, rw := cpus(r.runs)
		o := float64(median(r.diffs)) / float64(m)
		over[r.name] = o
		note := ""
		if r.bad > 0 {
			note = fmt.Sprintf("  WARNING: %d/%d runs counted fewer than M events under their key %v (-1: key absent)", r.bad, len(r.runs), r.counted)
		}
		fmt.Printf("   %-36s %12s %12s %14.1f%s\n", r.name, ms(median(rc)), ms(median(rw)), o, note)
	}
	return over
}

// get is m[k], or NaN when the measurement was not made.
func get(m map[string]float64, k string) float64 {
	if v, ok := m[k]; ok {
		return v
	}
	return math.NaN()
}

const (
	oursGetppid  = "ours: syscall::getppid:entry"
	basePrefix   = "baseline: "
	bpfGetppid   = "bpftrace: sys_enter_getppid"
	floorPrefix  = "floor: "
	oursWide     = "ours: syscall:::entry"
	oursWideFast = "ours sw=10ms: syscall:::entry"
	bpfWide      = "bpftrace: sys_enter_* (fair pair)"
	bpfRaw       = "bpftrace: raw_syscalls:sys_enter"
)

// floors are the floor tracers this kernel runs, by kind (floorKinds),
// classic tracepoint first.
func floors(c *config) []tracer {
	var ts []tracer
	for _, k := range []string{"tp", "raw", "btf", "tail", "btftail"} {
		if (k == "btf" || k == "btftail") && !haveBTF() {
			continue
		}
		ts = append(ts, tracer{floorPrefix + k, []string{c.self, "-floor", k}, "", false})
	}
	return ts
}

// haveBTF reports whether the kernel has BTF, which tp_btf needs.
func haveBTF() bool {
	_, err := os.Stat("/sys/kernel/btf/vmlinux")
	return err == nil
}

// getppidTracers are the tracers of the per-event benchmark: ours,
// bpftrace's, the baseline's and the floors.
func getppidTracers(c *config) []tracer {
	prog := `syscall::getppid:entry { @[execname] = count(); } BEGIN { printf("ready\n"); }`
	ts := []tracer{
		{oursGetppid, []string{c.dtrace, "-q", "-n", prog}, loopName, true},
		{bpfGetppid, []string{c.bpftrace, "-e",
			`BEGIN { printf("ready\n"); } tracepoint:syscalls:sys_enter_getppid { @[comm] = count(); }`}, loopName, false},
	}
	if c.baseline != "" {
		ts = append(ts, tracer{basePrefix + "syscall::getppid:entry", []string{c.baseline, "-q", "-n", prog}, loopName, true})
	}
	return append(ts, floors(c)...)
}

func printGetppidCommands(c *config) {
	fmt.Println("   ours:     dtrace -q -n 'syscall::getppid:entry { @[execname] = count(); }'")
	fmt.Println("   bpftrace: bpftrace -e 'tracepoint:syscalls:sys_enter_getppid { @[comm] = count(); }'")
	if c.baseline != "" {
		fmt.Printf("   baseline: the same program, %s\n", c.baseline)
	}
	for _, t := range floors(c) {
		fmt.Printf("   %-9s %s, ++ a per-CPU array slot\n", strings.TrimPrefix(t.name, floorPrefix)+":", floorKinds[strings.TrimPrefix(t.name, floorPrefix)])
	}
	fmt.Println("   (each also prints \"ready\" from BEGIN; the loop starts once the probe is attached)")
}

// Per-event targets (issue 22): ours against bpftrace's and the floors'.
const (
	eventBpftraceTarget = 0.4
	eventFloorTarget    = 1.15
)

func wideTracers(c *config) []tracer {
	return []tracer{
		{oursWide, []string{c.dtrace, "-q", "-n",
			`syscall:::entry { @[probefunc] = count(); } BEGIN { printf("ready\n"); }`}, "getppid", true},
		{bpfWide, []string{c.bpftrace, "-e",
			`BEGIN { printf("ready\n"); } tracepoint:syscalls:sys_enter_* { @[probe] = count(); }`}, "tracepoint:syscalls:sys_enter_getppid", false},
		{bpfRaw, []string{c.bpftrace, "-e",
			`BEGIN { printf("ready\n"); } tracepoint:raw_syscalls:sys_enter { @[args->id] = count(); }`}, strconv.Itoa(getppidNR), false},
	}
}

func printWideCommands() {
	fmt.Println("   ours:     dtrace -q -n 'syscall:::entry { @[probefunc] = count(); }'")
	fmt.Println("   bpftrace: bpftrace -e 'tracepoint:syscalls:sys_enter_* { @[probe] = count(); }'")
	fmt.Println("   bpftrace: bpftrace -e 'tracepoint:raw_syscalls:sys_enter { @[args->id] = count(); }'")
}

func benchEvent(c *config) error {
	fmt.Printf("\n== 2. per-event overhead: %d rounds of M=%d getppid() calls, alternating\n", c.rounds, c.m)
	printGetppidCommands(c)
	over, err := runEvents(c, c.m, 0, available(c, getppidTracers(c)))
	if err != nil {
		return err
	}
	o, b := get(over, oursGetppid), get(over, bpfGetppid)
	fmt.Printf("   ratios: ours/bpftrace %s", ratio(o, b))
	for _, f := range floors(c) {
		fmt.Printf(", ours/%s %s", f.name, ratio(o, get(over, f.name)))
	}
	if c.baseline != "" {
		fmt.Printf(", ours/baseline %s", ratio(o, get(over, basePrefix+"syscall::getppid:entry")))
	}
	fmt.Println()
	if c.noSyscall == "" {
		target(fmt.Sprintf("per-event overhead <= %.2fx bpftrace's: %s", eventBpftraceTarget, ratio(o, b)), o <= eventBpftraceTarget*b)
		// The floor of the way ours goes into the kernel: the cheapest.
		f := math.Inf(1)
		for _, t := range floors(c) {
			f = math.Min(f, get(over, t.name))
		}
		target(fmt.Sprintf("per-event overhead <= %.2fx the cheapest floor's: %s", eventFloorTarget, ratio(o, f)), o <= eventFloorTarget*f)
	}
	return nil
}

// benchOther measures what the tracers of benchmark 2 cost the system
// calls they do not trace: the loop makes getpid() calls instead. A
// program on raw sys_enter runs (and returns) for every system call; a
// perf tracepoint's costs the others only the kernel's syscall
// tracepoint path.
func benchOther(c *config) error {
	fmt.Printf("\n== 2e. cost to other system calls: %d rounds of M=%d getpid() calls, alternating, under the tracers of 2\n", c.rounds, c.m)
	printGetppidCommands(c)
	_, err := runEvents(c, c.m, otherNR, available(c, getppidTracers(c)))
	return err
}

// benchBreakdown (not run by default: -only breakdown) measures the
// per-event overhead of simpler clauses on the same probe, to show where
// the time of the event benchmark's clause goes.
func benchBreakdown(c *config) error {
	fmt.Printf("\n== 2c. per-event overhead by clause: %d rounds of M=%d getppid() calls, alternating\n", c.rounds, c.m)
	var ts []tracer
	for _, body := range []string{"", "@ = count();", "@[pid] = count();", "@[execname] = count();"} {
		ts = append(ts, tracer{"ours: { " + body + " }", []string{c.dtrace, "-q", "-n",
			"syscall::getppid:entry { " + body + ` } BEGIN { printf("ready\n"); }`}, noCheck, true})
	}
	for _, body := range []string{"", "@ = count();", "@[pid] = count();", "@[comm] = count();"} {
		ts = append(ts, tracer{"bpftrace: { " + body + " }", []string{c.bpftrace, "-e",
			`BEGIN { printf("ready\n"); } tracepoint:syscalls:sys_enter_getppid { ` + body + " }"}, noCheck, false})
	}
	ts = append(ts, floors(c)...)
	_, err := runEvents(c, c.m, 0, available(c, ts))
	return err
}

// benchWide is per-event overhead again, under the wide descriptions of
// the attach benchmark: every system call is traced, the loop's getppid()
// calls among them.
func benchWide(c *config) error {
	fmt.Printf("\n== 2b. per-event overhead, wide descriptions: %d rounds of M=%d getppid() calls, alternating\n", c.rounds, c.wideM)
	printWideCommands()
	ts := available(c, wideTracers(c))
	over, err := runEvents(c, c.wideM, 0, ts)
	if err != nil {
		return err
	}
	o, b, r := get(over, oursWide), get(over, bpfWide), get(over, bpfRaw)
	fmt.Printf("   ratios: ours/bpftrace(sys_enter_*) %s, ours/bpftrace(raw_syscalls) %s\n", ratio(o, b), ratio(o, r))
	return nil
}
