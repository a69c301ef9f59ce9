//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// ---------------------------------------------------------------------
// 1. start-up

type usage struct {
	wall, cpu time.Duration
	rssKB     int64
}

// runUsage runs argv to completion and returns its wall time, the CPU
// time (user+sys) and peak RSS of it and its waited-for children.
func runUsage(argv []string) (usage, string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	t := time.Now()
	err := cmd.Run()
	wall := time.Since(t)
	if err != nil {
		return usage{}, out.String(), fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, out.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return usage{wall: wall, cpu: cpu, rssKB: ru.Maxrss}, out.String(), nil
}

// Start-up targets (issue 22): our wall time and peak RSS as a fraction
// of bpftrace's, and no slower than the baseline in paired runs.
const (
	startupWallTarget = 0.05
	startupRSSTarget  = 0.08
	// binaryTarget is issue 22's size of the binary as the README
	// builds it (bytes, decimal megabytes as ls -l shows them).
	binaryTarget = 12e6
)

func benchStartup(c *config) error {
	type cmdline struct {
		name string
		argv []string
	}
	cmds := []cmdline{
		{"ours", []string{c.dtrace, "-n", "BEGIN { exit(0); }"}},
		{"bpftrace", []string{c.bpftrace, "-e", "BEGIN { exit(); }"}},
	}
	const ours, theirs = 0, 1
	base := -1
	if c.baseline != "" {
		base = len(cmds)
		cmds = append(cmds, cmdline{"baseline", []string{c.baseline, "-n", "BEGIN { exit(0); }"}})
	}
	diag := -1
	if c.diag {
		diag = len(cmds)
		cmds = append(cmds, cmdline{"ours sw=10ms", []string{c.dtrace, "-x", "switchrate=10ms", "-n", "BEGIN { exit(0); }"}})
	}
	fmt.Printf("\n== 1. start-up: %d rounds, alternating (first round discarded as warm-up)\n", c.startupRounds)
	fmt.Printf("   ours:     dtrace -n 'BEGIN { exit(0); }'\n   bpftrace: bpftrace -e 'BEGIN { exit(); }'\n")
	if base >= 0 {
		fmt.Printf("   baseline: the same program, %s\n", c.baseline)
	}
	if diag >= 0 {
		fmt.Printf("   diagnostic, not the comparison: ours sw=10ms = dtrace -x switchrate=10ms -n 'BEGIN { exit(0); }'\n")
	}
	wall := make([][]time.Duration, len(cmds))
	cpu := make([][]time.Duration, len(cmds))
	rss := make([][]int64, len(cmds))
	var paired, pairedCPU []float64 // ours/baseline, round by round
	for i := 0; i <= c.startupRounds; i++ {
		var line []string
		for k, cl := range cmds {
			u, _, err := runUsage(cl.argv)
			if err != nil {
				return err
			}
			line = append(line, fmt.Sprintf("%s %s cpu %s rss %d KB", cl.name, ms(u.wall), ms(u.cpu), u.rssKB))
			if i > 0 {
				wall[k], cpu[k], rss[k] = append(wall[k], u.wall), append(cpu[k], u.cpu), append(rss[k], u.rssKB)
			}
		}
		if i > 0 && base >= 0 {
			paired = append(paired, float64(wall[ours][i-1])/float64(wall[base][i-1]))
			pairedCPU = append(pairedCPU, float64(cpu[ours][i-1])/float64(cpu[base][i-1]))
		}
		if c.verbose {
			fmt.Printf("   round %2d: %s\n", i, strings.Join(line, " | "))
		}
	}
	fmt.Printf("   %-16s", "median")
	for _, cl := range cmds {
		fmt.Printf(" %13s", cl.name)
	}
	fmt.Printf(" %12s", "ours/bpftr.")
	if base >= 0 {
		fmt.Printf(" %12s", "ours/base")
	}
	fmt.Println()
	row := func(name string, v []float64, f func(float64) string) {
		fmt.Printf("   %-16s", name)
		for _, x := range v {
			fmt.Printf(" %13s", f(x))
		}
		fmt.Printf(" %12s", ratio(v[ours], v[theirs]))
		if base >= 0 {
			fmt.Printf(" %12s", ratio(v[ours], v[base]))
		}
		fmt.Println()
	}
	var vw, vm, vc, vr []float64
	for k := range cmds {
		vw = append(vw, float64(median(wall[k])))
		vm = append(vm, float64(minimum(wall[k])))
		vc = append(vc, float64(median(cpu[k])))
		vr = append(vr, float64(medianInt(rss[k])))
	}
	dur := func(x float64) string { return ms(time.Duration(x)) }
	row("wall", vw, dur)
	row("wall, best run", vm, dur)
	row("CPU (user+sys)", vc, dur)
	row("peak RSS", vr, func(x float64) string { return fmt.Sprintf("%.1f MB", x/1024) })
	w, r := vw[ours]/vw[theirs], vr[ours]/vr[theirs]
	target(fmt.Sprintf("start-up wall <= %.2fx bpftrace's: %.3fx", startupWallTarget, w), w <= startupWallTarget)
	target(fmt.Sprintf("start-up peak RSS <= %.2fx bpftrace's: %.3fx", startupRSSTarget, r), r <= startupRSSTarget)
	if base >= 0 {
		p, pc := medianFloat(paired), medianFloat(pairedCPU)
		fmt.Printf("   paired (round by round) ours/baseline: wall %.2fx, CPU %.2fx\n", p, pc)
		target(fmt.Sprintf("start-up wall <= the baseline's (median of paired ratios): %.2fx", p), p <= 1)
	}
	binarySizes(c)
	return nil
}

// binarySizes prints the size of each dtrace binary and, for ours when
// dtbench built it as the README does, checks it against binaryTarget
// (a binary given with -dtrace may have been built otherwise).
func binarySizes(c *config) {
	for _, b := range []struct{ name, path string }{{"ours", c.dtrace}, {"baseline", c.baseline}} {
		if b.path == "" {
			continue
		}
		if fi, err := os.Stat(b.path); err == nil {
			fmt.Printf("   binary %-9s %5.1f MB  %s\n", b.name, float64(fi.Size())/1e6, b.path)
		}
	}
	if c.builtDtrace {
		if fi, err := os.Stat(c.dtrace); err == nil {
			target(fmt.Sprintf("binary as the README builds it <= %.0f MB: %.1f MB", binaryTarget/1e6, float64(fi.Size())/1e6), float64(fi.Size()) <= binaryTarget)
		}
	}
}
