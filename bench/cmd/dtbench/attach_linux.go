//go:build linux

package main

import (
	"errors"
	"fmt"
	"time"
)

// ---------------------------------------------------------------------
// 3. compile-and-attach

func benchAttach(c *config) error {
	fmt.Printf("\n== 3. compile-and-attach: %d rounds, alternating (first round discarded as warm-up)\n", c.rounds)
	printWideCommands()
	fmt.Println("   ready = from exec to the line BEGIN prints (BEGIN fires once every probe is attached);")
	fmt.Println("   exit  = from SIGINT to exit (aggregation printed, probes detached); CPU, RSS: whole run")
	all := wideTracers(c)
	if c.diag {
		all = append(all, tracer{oursWideFast, []string{c.dtrace, "-q", "-x", "switchrate=10ms", "-n",
			`syscall:::entry { @[probefunc] = count(); } BEGIN { printf("ready\n"); }`}, "getppid", true})
		fmt.Println("   diagnostic, not the comparison: ours sw=10ms = the same with -x switchrate=10ms")
	}
	ts := available(c, all)
	const check = 1000
	type acc struct {
		ready, exit, cpu []time.Duration
		rss              []int64
		bad              int
	}
	accs := make([]acc, len(ts))
	for round := 0; round <= c.rounds; round++ {
		for i, t := range ts {
			r, ready, err := startTracer(c, t)
			if err != nil {
				return err
			}
			// Tracing must be active: the loop's calls must be counted.
			_, lerr := runLoop(c, check)
			exit, u, serr := r.stop(c)
			if lerr != nil {
				return lerr
			}
			if errors.Is(serr, errHung) {
				fmt.Printf("   WARNING: round %d: %v; sample dropped\n", round, serr)
				continue
			} else if serr != nil {
				return serr
			}
			n := r.count()
			if c.verbose {
				fmt.Printf("   round %d: %-34s ready %s exit %s cpu %s rss %d KB (counted %d)\n", round, t.name, ms(ready), ms(exit), ms(u.cpu), u.rssKB, n)
			}
			if round == 0 {
				continue // warm-up
			}
			a := &accs[i]
			a.ready, a.exit, a.cpu, a.rss = append(a.ready, ready), append(a.exit, exit), append(a.cpu, u.cpu), append(a.rss, u.rssKB)
			if n < check {
				a.bad++
			}
		}
	}
	fmt.Printf("   %-36s %10s %10s %10s %10s %9s\n", "median", "ready", "(best)", "exit", "CPU", "peak RSS")
	readyAt, exitAt := make(map[string]float64), make(map[string]float64)
	for i, t := range ts {
		a := accs[i]
		note := ""
		if a.bad > 0 {
			note = fmt.Sprintf("  WARNING: in %d runs the getppid calls made after ready were not counted under %q", a.bad, t.key)
		}
		readyAt[t.name], exitAt[t.name] = float64(median(a.ready)), float64(median(a.exit))
		fmt.Printf("   %-36s %10s %10s %10s %10s %6.1f MB%s\n", t.name, ms(median(a.ready)), ms(minimum(a.ready)), ms(median(a.exit)), ms(median(a.cpu)), float64(medianInt(a.rss))/1024, note)
	}
	fmt.Printf("   ratios (ready): ours/bpftrace(sys_enter_*) %s, ours/bpftrace(raw_syscalls) %s\n",
		ratio(get(readyAt, oursWide), get(readyAt, bpfWide)), ratio(get(readyAt, oursWide), get(readyAt, bpfRaw)))
	fmt.Printf("   ratios (exit):  ours/bpftrace(sys_enter_*) %s, ours/bpftrace(raw_syscalls) %s\n",
		ratio(get(exitAt, oursWide), get(exitAt, bpfWide)), ratio(get(exitAt, oursWide), get(exitAt, bpfRaw)))
	if _, ok := readyAt[oursWideFast]; ok {
		fmt.Printf("   diagnostic (ready): ours sw=10ms/bpftrace(sys_enter_*) %s, ours sw=10ms/bpftrace(raw_syscalls) %s\n",
			ratio(get(readyAt, oursWideFast), get(readyAt, bpfWide)), ratio(get(readyAt, oursWideFast), get(readyAt, bpfRaw)))
	}
	return nil
}
