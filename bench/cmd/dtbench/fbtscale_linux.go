package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// enabledFunctions is the kernel's list of the functions the function
// tracer calls out of (every kprobe.multi, kprobe and fentry attachment),
// one line each.
const enabledFunctions = "/sys/kernel/tracing/enabled_functions"

// benchFbtScale (-only fbtscale; needs a kernel with kprobe.multi, such as
// the 6.12 guest of ../shared/vm/run-kernel) measures fbt at scale, issue
// 22's two targets:
//
//  1. fbt::vfs_*:entry { @[probefunc] = count(); } against bpftrace's
//     kprobe:vfs_*, alternating, ready (exec to the line BEGIN prints)
//     plus exit (SIGINT to exit): ours at most 0.5x bpftrace's;
//  2. fbt:::entry over every function the kernel lets us probe: ready
//     plus exit under 120 s, every function the function tracer lists
//     enabled once while it runs (the kernel's enabled_functions against
//     available_filter_functions, and the probes against dtrace -l), none
//     left after.
func benchFbtScale(c *config) error {
	if out, err := exec.Command(c.dtrace, "-l", "-n", "fbt::vfs_read:entry").CombinedOutput(); err != nil || !strings.Contains(string(out), "vfs_read entry") {
		fmt.Printf("\n== fbtscale: skipped: this kernel offers no fbt probes: %s\n", strings.TrimSpace(string(out)))
		return nil
	}
	fmt.Printf("\n== fbtscale 1. fbt::vfs_*:entry against bpftrace's kprobe:vfs_*: %d rounds, alternating (first round discarded)\n", c.rounds)
	ts := []tracer{
		{"ours: fbt::vfs_*:entry", []string{c.dtrace, "-q", "-n",
			`fbt::vfs_*:entry { @[probefunc] = count(); } BEGIN { printf("ready\n"); }`}, noCheck, true},
		{"bpftrace: kprobe:vfs_*", []string{c.bpftrace, "-e",
			`BEGIN { printf("ready\n"); } kprobe:vfs_* { @[probe] = count(); }`}, noCheck, false},
	}
	ready, exit, err := readyExitRounds(c, ts, 24)
	if err != nil {
		return err
	}
	total := printReadyExit(ts, ready, exit, 24, 12)
	fmt.Printf("   ours/bpftrace: ready %s, exit %s, total %s (target: total <= 0.50x)\n",
		ratio(float64(median(ready[0])), float64(median(ready[1]))),
		ratio(float64(median(exit[0])), float64(median(exit[1]))),
		ratio(float64(total[0]), float64(total[1])))

	fmt.Printf("\n== fbtscale 2. fbt:::entry { @[probefunc] = count(); } on every traceable function, once\n")
	listing, err := exec.Command(c.dtrace, "-l", "-n", "fbt:::entry").Output()
	if err != nil {
		return fmt.Errorf("dtrace -l -n fbt:::entry: %v", err)
	}
	probes := strings.Count(string(listing), "\n") - 1
	listed, err := traceable("/sys/kernel/tracing/available_filter_functions")
	if err != nil {
		return err
	}
	var enabled int
	all := tracer{"ours: fbt:::entry", []string{c.dtrace, "-q", "-n",
		`fbt:::entry { @[probefunc] = count(); } BEGIN { printf("ready\n"); }`}, noCheck, true}
	rd, ex, out, err := readyExit(c, all, func() {
		// Read while every probe is attached.
		enabled, _ = traceable(enabledFunctions)
	})
	if err != nil {
		return err
	}
	left, _ := traceable(enabledFunctions)
	keys := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) != "" {
			keys++
		}
	}
	fmt.Printf("   ready %s, exit %s, total %s (target: under 120 s)\n", ms(rd), ms(ex), ms(rd+ex))
	fmt.Printf("   probes listed (dtrace -l) %d; functions the kernel lists %d (names shared by static functions count each);\n", probes, listed)
	fmt.Printf("   enabled while tracing %d (want %d: each once), after exit %d (want 0); %d functions counted\n", enabled, listed, left, keys)
	if enabled != listed || left != 0 {
		fmt.Println("   MISMATCH: not every traceable function was enabled once, or some stayed enabled")
	}
	return nil
}

// readyExit runs t until it is ready, calls during (if any), then stops
// it: its ready and exit times and what it printed after "ready".
func readyExit(c *config, t tracer, during func()) (ready, exit time.Duration, out string, err error) {
	r, rd, err := startTracer(c, t)
	if err != nil {
		return 0, 0, "", err
	}
	if during != nil {
		during()
	}
	ex, _, err := r.stop(c)
	if err != nil {
		return 0, 0, "", err
	}
	return rd, ex, r.out.String(), nil
}

// readyExitRounds runs each tracer of ts c.rounds+1 times, alternating,
// and returns the ready and exit times of each (readyExit) from every
// round but the first; a run that hangs is reported and its sample
// dropped. w is the width of the names in -v's lines.
func readyExitRounds(c *config, ts []tracer, w int) (ready, exit [][]time.Duration, err error) {
	ready, exit = make([][]time.Duration, len(ts)), make([][]time.Duration, len(ts))
	for round := 0; round <= c.rounds; round++ {
		for i, t := range ts {
			rd, ex, _, err := readyExit(c, t, nil)
			if errors.Is(err, errHung) {
				fmt.Printf("   WARNING: round %d: %v; sample dropped\n", round, err)
				continue
			} else if err != nil {
				return nil, nil, err
			}
			if c.verbose {
				fmt.Printf("   round %d: %-*s ready %s exit %s\n", round, w, t.name, ms(rd), ms(ex))
			}
			if round > 0 {
				ready[i], exit[i] = append(ready[i], rd), append(exit[i], ex)
			}
		}
	}
	return ready, exit, nil
}

// printReadyExit prints the median ready, exit and total times of each
// tracer, names nw and times tw wide, and returns the totals.
func printReadyExit(ts []tracer, ready, exit [][]time.Duration, nw, tw int) []time.Duration {
	fmt.Printf("   %-*s %*s %*s %*s\n", nw, "median", tw, "ready", tw, "exit", tw, "total")
	total := make([]time.Duration, len(ts))
	for i, t := range ts {
		total[i] = median(ready[i]) + median(exit[i])
		fmt.Printf("   %-*s %*s %*s %*s\n", nw, t.name, tw, ms(median(ready[i])), tw, ms(median(exit[i])), tw, ms(total[i]))
	}
	return total
}

// traceable counts the lines of a tracefs list of functions, less the
// entries the kernel marks invalid.
func traceable(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" && !strings.HasPrefix(l, "__ftrace_invalid_address__") {
			n++
		}
	}
	return n, nil
}
