package main

import (
	"fmt"
	"os/exec"
	"strings"
)

// hotFunction is the kernel function every getppid() call runs (amd64),
// the hot function of the fbt per-event benchmark.
const hotFunction = "__x64_sys_getppid"

// benchFbt (-only fbt; needs a kernel with kprobes and fentry, such as
// the 6.12 guest of ../shared/vm/run-kernel) compares fbt with bpftrace's
// kfunc (fentry) and kprobe probes: attach-and-detach time of every
// vfs_* function's entry, and the per-event cost of a hot function.
func benchFbt(c *config) error {
	// dtrace -l exits 0 when nothing matches: look for the probe.
	if out, err := exec.Command(c.dtrace, "-l", "-n", "fbt::"+hotFunction+":entry").CombinedOutput(); err != nil || !strings.Contains(string(out), hotFunction+" entry") {
		fmt.Printf("\n== fbt: skipped: this kernel offers no fbt probes: %s\n", strings.TrimSpace(string(out)))
		return nil
	}
	kprobe := func(argv ...string) []string { return append([]string{"env", "DTRACE_FBT=kprobe"}, argv...) }
	fentry := func(argv ...string) []string { return append([]string{"env", "DTRACE_FBT=fentry"}, argv...) }
	fmt.Printf("\n== fbt 1. attach and detach fbt::vfs_*:entry: %d rounds, alternating (first round discarded)\n", c.rounds)
	fmt.Println("   ready = exec to the line BEGIN prints (every probe attached); exit = SIGINT to exit (detached)")
	attach := []tracer{
		{"ours: fbt::vfs_*:entry (kprobe.multi)", []string{c.dtrace, "-q", "-n",
			`fbt::vfs_*:entry { @[probefunc] = count(); } BEGIN { printf("ready\n"); }`}, noCheck, true},
		{"ours: fbt::vfs_*:entry (fentry)", fentry(c.dtrace, "-q", "-n",
			`fbt::vfs_*:entry { @[probefunc] = count(); } BEGIN { printf("ready\n"); }`), noCheck, true},
		{"ours: fbt::vfs_*:entry (kprobe)", kprobe(c.dtrace, "-q", "-n",
			`fbt::vfs_*:entry { @[probefunc] = count(); } BEGIN { printf("ready\n"); }`), noCheck, true},
		{"bpftrace: kfunc:vfs_*", []string{c.bpftrace, "-e",
			`BEGIN { printf("ready\n"); } kfunc:vfs_* { @[probe] = count(); }`}, noCheck, false},
		{"bpftrace: kprobe:vfs_*", []string{c.bpftrace, "-e",
			`BEGIN { printf("ready\n"); } kprobe:vfs_* { @[probe] = count(); }`}, noCheck, false},
	}
	ready, exit, err := readyExitRounds(c, attach, 34)
	if err != nil {
		return err
	}
	printReadyExit(attach, ready, exit, 36, 10)

	fmt.Printf("\n== fbt 2. per-event overhead of %s: %d rounds of M=%d getppid() calls, alternating\n", hotFunction, c.rounds, c.m)
	ts := []tracer{
		{"ours: fbt (fentry)", []string{c.dtrace, "-q", "-n",
			`fbt::` + hotFunction + `:entry { @[execname] = count(); } BEGIN { printf("ready\n"); }`}, loopName, true},
		{"ours: fbt (kprobe)", kprobe(c.dtrace, "-q", "-n",
			`fbt::`+hotFunction+`:entry { @[execname] = count(); } BEGIN { printf("ready\n"); }`), loopName, true},
		{"bpftrace: kfunc", []string{c.bpftrace, "-e",
			`BEGIN { printf("ready\n"); } kfunc:` + hotFunction + ` { @[comm] = count(); }`}, loopName, false},
		{"bpftrace: kprobe", []string{c.bpftrace, "-e",
			`BEGIN { printf("ready\n"); } kprobe:` + hotFunction + ` { @[comm] = count(); }`}, loopName, false},
	}
	over, err := runEvents(c, c.m, 0, ts)
	if err != nil {
		return err
	}
	fmt.Printf("   ratios: fentry ours/bpftrace %s, kprobe ours/bpftrace %s\n",
		ratio(get(over, ts[0].name), get(over, ts[2].name)), ratio(get(over, ts[1].name), get(over, ts[3].name)))
	fmt.Println("   (fbt::vfs_*:entry matches more than fbt.WideThreshold probes: by default one kprobe.multi link;")
	fmt.Println("    DTRACE_FBT=fentry gives one fentry program each, DTRACE_FBT=kprobe one kprobe each)")
	return nil
}
