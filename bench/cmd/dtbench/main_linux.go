//go:build linux

// Command dtbench measures our dtrace side by side with bpftrace, in one
// run, alternating the two (ours, theirs, ours, theirs, ...), and prints
// medians and ratios. See bench/README.md.
package main

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

//go:embed csrc/getppid-loop.c
var loopC []byte

// loopName is the loop program's file name, and so its comm/execname.
const loopName = "getppid-loop"

// getppidNR is getppid's system call number on amd64, bpftrace's key for
// it under raw_syscalls (args->id).
const getppidNR = "110"

type config struct {
	dtrace, bpftrace string
	startupRounds    int
	rounds           int
	m, wideM         int64
	cpu              int
	only             map[string]bool
	timeout          time.Duration
	verbose          bool
	diag             bool
	noSyscall        string // why our syscall provider is unavailable; "" if it is available
	tmp              string
	loop             []string // argv prefix of the loop program
	self             string   // this executable (for -floor)
}

func main() {
	if filepath.Base(os.Args[0]) == loopName {
		os.Exit(goLoop(os.Args[1:]))
	}
	var c config
	var only string
	var floor bool
	flag.StringVar(&c.dtrace, "dtrace", "", "our dtrace binary (default: go build ./cmd/dtrace of the enclosing module)")
	flag.StringVar(&c.bpftrace, "bpftrace", "", "bpftrace binary (default: bpftrace on $PATH; bench/setup.sh installs it)")
	flag.IntVar(&c.startupRounds, "startup-rounds", 20, "rounds of the start-up benchmark")
	flag.IntVar(&c.rounds, "rounds", 5, "rounds of the per-event and attach benchmarks")
	flag.Int64Var(&c.m, "m", 2000000, "getppid() calls per loop run")
	flag.Int64Var(&c.wideM, "wide-m", 200000, "getppid() calls per loop run under the wide descriptions")
	flag.IntVar(&c.cpu, "cpu", runtime.NumCPU()-1, "CPU to pin the loop program to (-1: none)")
	flag.StringVar(&only, "only", "startup,event,attach,wide,stream", "benchmarks to run, comma-separated")
	flag.DurationVar(&c.timeout, "timeout", 120*time.Second, "longest wait for a tracer to become ready or to exit")
	flag.BoolVar(&c.verbose, "v", false, "print every sample")
	flag.BoolVar(&c.diag, "diag", true, "also run ours with -x switchrate=10ms (start-up and attach), to show what the consumer's polling costs")
	flag.BoolVar(&floor, "floor", false, "internal: run the floor tracer")
	flag.Parse()
	if floor {
		if err := runFloor(); err != nil {
			fmt.Fprintln(os.Stderr, "dtbench -floor:", err)
			os.Exit(1)
		}
		return
	}
	c.only = make(map[string]bool)
	for _, s := range strings.Split(only, ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.only[s] = true
		}
	}
	if err := run(&c); err != nil {
		fmt.Fprintln(os.Stderr, "dtbench:", err)
		os.Exit(1)
	}
}

func run(c *config) error {
	if os.Geteuid() != 0 {
		return errors.New("must run as root (both tracers load BPF programs)")
	}
	tmp, err := os.MkdirTemp("", "dtbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	c.tmp = tmp
	if c.self, err = os.Executable(); err != nil {
		return err
	}
	if c.dtrace == "" {
		if c.dtrace, err = buildDtrace(tmp); err != nil {
			return err
		}
	}
	if c.bpftrace == "" {
		if c.bpftrace, err = exec.LookPath("bpftrace"); err != nil {
			return errors.New("bpftrace not found: run bench/setup.sh (apt-get install -y bpftrace) or pass -bpftrace")
		}
	}
	if c.loop, err = buildLoop(tmp); err != nil {
		return err
	}
	header(c)

	for _, b := range benches {
		if b.name == "event" {
			if ok, why := haveSyscall(c); !ok {
				c.noSyscall = why
			}
		}
		if !c.only[b.name] {
			continue
		}
		if err := b.run(c); err != nil {
			return fmt.Errorf("%s: %w", b.what, err)
		}
	}
	return nil
}

// benches are the benchmarks in the order they run, each with the name
// -only selects it by and what its error says it was.
var benches = []struct {
	name, what string
	run        func(*config) error
}{
	{"startup", "start-up", benchStartup},
	{"event", "per-event overhead", benchEvent},
	{"wide", "wide per-event overhead", benchWide},
	{"breakdown", "breakdown", benchBreakdown},
	{"attach", "compile-and-attach", benchAttach},
	{"fbt", "fbt", benchFbt},
	{"stream", "printf stream", benchStream},
}

// buildDtrace builds ./cmd/dtrace of the module enclosing the working
// directory.
func buildDtrace(tmp string) (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the dtrace module: run from the repository or pass -dtrace")
	}
	bin := filepath.Join(tmp, "dtrace")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/dtrace")
	cmd.Dir = filepath.Dir(gomod)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/dtrace: %w", err)
	}
	return bin, nil
}

// buildLoop compiles csrc/getppid-loop.c with gcc; without gcc the loop is this
// program itself, copied under the loop's name (goLoop).
func buildLoop(tmp string) ([]string, error) {
	bin := filepath.Join(tmp, loopName)
	if gcc, err := exec.LookPath("gcc"); err == nil {
		src := filepath.Join(tmp, "getppid-loop.c")
		if err := os.WriteFile(src, loopC, 0o644); err != nil {
			return nil, err
		}
		out, err := exec.Command(gcc, "-O2", "-o", bin, src).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("gcc getppid-loop.c: %v\n%s", err, out)
		}
		return []string{bin}, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(self)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		return nil, err
	}
	fmt.Println("note: gcc not found; the getppid loop is written in Go")
	return []string{bin}, nil
}

// goLoop is csrc/getppid-loop.c in Go, for machines without gcc.
func goLoop(args []string) int {
	if len(args) < 1 {
		fmt.Fprintln(os.Stderr, "usage: getppid-loop M [CPU]")
		return 2
	}
	m, _ := strconv.ParseInt(args[0], 10, 64)
	runtime.LockOSThread()
	if len(args) > 1 {
		if cpu, _ := strconv.Atoi(args[1]); cpu >= 0 {
			var set [16]uint64
			set[cpu/64] |= 1 << (cpu % 64)
			syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, uintptr(len(set)*8), uintptr(unsafe.Pointer(&set)))
		}
	}
	var c0, c1 unix.Timespec
	t := time.Now()
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &c0)
	for i := int64(0); i < m; i++ {
		syscall.RawSyscall(syscall.SYS_GETPPID, 0, 0, 0)
	}
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &c1)
	fmt.Println(c1.Nano()-c0.Nano(), time.Since(t).Nanoseconds())
	return 0
}

func header(c *config) {
	var uts syscall.Utsname
	_ = syscall.Uname(&uts)
	rel := utsString(uts.Release[:])
	bv, _ := exec.Command(c.bpftrace, "--version").Output()
	rev, _ := exec.Command("git", "log", "-1", "--format=%h %cd", "--date=iso").Output()
	fmt.Printf("dtbench %s  Linux %s  %d CPUs  %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), rel, runtime.NumCPU(), cpuModel())
	fmt.Printf("ours:   %s (%s)\n", c.dtrace, strings.TrimSpace(string(rev)))
	fmt.Printf("theirs: %s (%s)\n", c.bpftrace, strings.TrimSpace(string(bv)))
	fmt.Printf("loop:   %s, M=%d getppid() calls, pinned to CPU %d\n", c.loop[0], c.m, c.cpu)
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average at start: %s\n", strings.Join(strings.Fields(string(la))[:3], " "))
	}
}

func utsString(b []int8) string {
	var s []byte
	for _, c := range b {
		if c == 0 {
			break
		}
		s = append(s, byte(c))
	}
	return string(s)
}

func cpuModel() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

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

func benchStartup(c *config) error {
	type cmdline struct {
		name string
		argv []string
	}
	cmds := []cmdline{
		{"ours", []string{c.dtrace, "-n", "BEGIN { exit(0); }"}},
		{"bpftrace", []string{c.bpftrace, "-e", "BEGIN { exit(); }"}},
	}
	if c.diag {
		cmds = append(cmds, cmdline{"ours sw=10ms", []string{c.dtrace, "-x", "switchrate=10ms", "-n", "BEGIN { exit(0); }"}})
	}
	fmt.Printf("\n== 1. start-up: %d rounds, alternating (first round discarded as warm-up)\n", c.startupRounds)
	fmt.Printf("   ours:     dtrace -n 'BEGIN { exit(0); }'\n   bpftrace: bpftrace -e 'BEGIN { exit(); }'\n")
	if c.diag {
		fmt.Printf("   diagnostic, not the comparison: ours sw=10ms = dtrace -x switchrate=10ms -n 'BEGIN { exit(0); }'\n")
	}
	wall := make([][]time.Duration, len(cmds))
	cpu := make([][]time.Duration, len(cmds))
	rss := make([][]int64, len(cmds))
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
		if c.verbose {
			fmt.Printf("   round %2d: %s\n", i, strings.Join(line, " | "))
		}
	}
	fmt.Printf("   %-16s %12s %12s %12s", "median", "ours", "bpftrace", "ours/theirs")
	if c.diag {
		fmt.Printf(" %14s %12s", "ours sw=10ms", "it/theirs")
	}
	fmt.Println()
	row := func(name string, v []float64, f func(float64) string) {
		fmt.Printf("   %-16s %12s %12s %12s", name, f(v[0]), f(v[1]), ratio(v[0], v[1]))
		if c.diag {
			fmt.Printf(" %14s %12s", f(v[2]), ratio(v[2], v[1]))
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
	w := vw[0] / vw[1]
	fmt.Printf("   target: wall <= 0.20x bpftrace's: %.2fx, %s\n", w, verdict(w <= 0.2))
	return nil
}

// ---------------------------------------------------------------------
// tracers running in the background

type tracer struct {
	name string
	argv []string
	key  string // the aggregation key that counts the loop's events; "" for the floor, noCheck for none
	ours bool
}

type running struct {
	t      tracer
	cmd    *exec.Cmd
	start  time.Time
	ready  chan time.Time // receives once, when "ready" is read
	done   chan struct{}  // closed when stdout is at EOF
	out    bytes.Buffer   // stdout after "ready"
	stderr bytes.Buffer
}

// startTracer starts t and waits until it prints "ready" on a line of its
// own (its BEGIN clause, printed once every probe is attached).
func startTracer(c *config, t tracer) (*running, time.Duration, error) {
	r := &running{t: t, ready: make(chan time.Time, 1), done: make(chan struct{})}
	r.cmd = exec.Command(t.argv[0], t.argv[1:]...)
	r.cmd.Stderr = &r.stderr
	pipe, err := r.cmd.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	r.start = time.Now()
	if err := r.cmd.Start(); err != nil {
		return nil, 0, err
	}
	go func() {
		defer close(r.done)
		br := bufio.NewReader(pipe)
		seen := false
		for {
			line, err := br.ReadString('\n')
			if !seen && strings.TrimSpace(line) == "ready" {
				seen = true
				r.ready <- time.Now()
			} else if seen {
				r.out.WriteString(line)
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case at := <-r.ready:
		return r, at.Sub(r.start), nil
	case <-r.done:
		r.cmd.Wait()
		return nil, 0, fmt.Errorf("%s exited before it was ready: %s\n%s", t.name, r.cmd.ProcessState, r.stderr.String())
	case <-time.After(c.timeout):
		r.cmd.Process.Kill()
		r.cmd.Wait()
		return nil, 0, fmt.Errorf("%s not ready after %s:\n%s", t.name, c.timeout, r.stderr.String())
	}
}

// errHung marks a tracer that did not exit after SIGINT: the sample is
// dropped with a warning, the run goes on.
var errHung = errors.New("did not exit after SIGINT")

// stop sends SIGINT and waits for the tracer to print its aggregations
// and exit; it returns how long that took and the tracer's CPU time. A
// tracer still running 60 s later gets SIGINT again (every 60 s), and is
// killed after c.timeout.
func (r *running) stop(c *config) (time.Duration, usage, error) {
	t := time.Now()
	r.cmd.Process.Signal(syscall.SIGINT)
	deadline := time.After(c.timeout)
	tick := time.NewTicker(60 * time.Second)
	defer tick.Stop()
	var hung string
wait:
	for {
		select {
		case <-r.done:
			break wait
		case <-tick.C:
			hung = procState(r.cmd.Process.Pid)
			r.cmd.Process.Signal(syscall.SIGINT)
		case <-deadline:
			hung = procState(r.cmd.Process.Pid)
			r.cmd.Process.Kill()
			<-r.done
			r.cmd.Wait()
			return 0, usage{}, fmt.Errorf("%s %w within %s (%s)", r.t.name, errHung, c.timeout, hung)
		}
	}
	err := r.cmd.Wait()
	d := time.Since(t)
	if err != nil && !isSigint(err) {
		return d, usage{}, fmt.Errorf("%s: %v\n%s", r.t.name, err, r.stderr.String())
	}
	if hung != "" {
		fmt.Printf("   note: %s needed SIGINT again after 60 s (%s)\n", r.t.name, hung)
	}
	ru := r.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return d, usage{wall: time.Since(r.start), cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), rssKB: ru.Maxrss}, nil
}

// procState describes a process that does not exit: its state and where
// it waits in the kernel.
func procState(pid int) string {
	st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	state := ""
	for _, line := range strings.Split(string(st), "\n") {
		if strings.HasPrefix(line, "State:") {
			state = strings.TrimSpace(strings.TrimPrefix(line, "State:"))
		}
	}
	wchan, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid))
	return fmt.Sprintf("state %s, wchan %s", state, wchan)
}

func isSigint(err error) bool {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
			return true
		}
	}
	return false
}

// count is how many of the loop's events the tracer's output reports.
func (r *running) count() int64 {
	if r.t.key == "" {
		return floorCount(r.out.String())
	}
	if r.t.key == noCheck {
		return math.MaxInt64
	}
	v, ok := aggCounts(r.out.String())[r.t.key]
	if !ok {
		return -1
	}
	return v
}

// noCheck is the key of a tracer whose count is not checked.
const noCheck = "\x00"

// loopRun is one run of the loop program: its CPU and wall time.
type loopRun struct{ cpu, wall time.Duration }

// runLoop runs the loop program with m calls and returns its own timing.
func runLoop(c *config, m int64) (loopRun, error) {
	argv := append(append([]string(nil), c.loop...), strconv.FormatInt(m, 10), strconv.Itoa(c.cpu))
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		return loopRun{}, fmt.Errorf("%s: %v", loopName, err)
	}
	cpu, wall, err := loopTimes(string(out))
	return loopRun{cpu, wall}, err
}

// haveSyscall says whether our dtrace offers syscall::getppid:entry and
// syscall:::entry, and if not, why.
func haveSyscall(c *config) (bool, string) {
	out, err := exec.Command(c.dtrace, "-l", "-n", "syscall::getppid:entry").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "getppid") {
		return false, "syscall provider not available: dtrace -l -n syscall::getppid:entry: " + strings.TrimSpace(string(out))
	}
	return true, ""
}

// available drops our tracers when the syscall provider is missing, and
// says so.
func available(c *config, ts []tracer) []tracer {
	if c.noSyscall == "" {
		return ts
	}
	fmt.Printf("   ours: %s\n", c.noSyscall)
	var keep []tracer
	for _, t := range ts {
		if !t.ours {
			keep = append(keep, t)
		}
	}
	return keep
}

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
// slow drift of a busy machine.
func measureEvents(c *config, m int64, ts []tracer) ([]loopRun, []*eventResult, error) {
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
			if n < m {
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
	bpfGetppid   = "bpftrace: sys_enter_getppid"
	floorGetppid = "floor: cilium/ebpf per-CPU counter"
	oursWide     = "ours: syscall:::entry"
	oursWideFast = "ours sw=10ms: syscall:::entry"
	bpfWide      = "bpftrace: sys_enter_* (fair pair)"
	bpfRaw       = "bpftrace: raw_syscalls:sys_enter"
)

func wideTracers(c *config) []tracer {
	return []tracer{
		{oursWide, []string{c.dtrace, "-q", "-n",
			`syscall:::entry { @[probefunc] = count(); } BEGIN { printf("ready\n"); }`}, "getppid", true},
		{bpfWide, []string{c.bpftrace, "-e",
			`BEGIN { printf("ready\n"); } tracepoint:syscalls:sys_enter_* { @[probe] = count(); }`}, "tracepoint:syscalls:sys_enter_getppid", false},
		{bpfRaw, []string{c.bpftrace, "-e",
			`BEGIN { printf("ready\n"); } tracepoint:raw_syscalls:sys_enter { @[args->id] = count(); }`}, getppidNR, false},
	}
}

func printWideCommands() {
	fmt.Println("   ours:     dtrace -q -n 'syscall:::entry { @[probefunc] = count(); }'")
	fmt.Println("   bpftrace: bpftrace -e 'tracepoint:syscalls:sys_enter_* { @[probe] = count(); }'")
	fmt.Println("   bpftrace: bpftrace -e 'tracepoint:raw_syscalls:sys_enter { @[args->id] = count(); }'")
}

func benchEvent(c *config) error {
	fmt.Printf("\n== 2. per-event overhead: %d rounds of M=%d getppid() calls, alternating\n", c.rounds, c.m)
	fmt.Println("   ours:     dtrace -q -n 'syscall::getppid:entry { @[execname] = count(); }'")
	fmt.Println("   bpftrace: bpftrace -e 'tracepoint:syscalls:sys_enter_getppid { @[comm] = count(); }'")
	fmt.Println("   floor:    TRACEPOINT program on syscalls:sys_enter_getppid, ++ a per-CPU array slot")
	fmt.Println("   (each also prints \"ready\" from BEGIN; the loop starts once the probe is attached)")
	ts := available(c, []tracer{
		{oursGetppid, []string{c.dtrace, "-q", "-n",
			`syscall::getppid:entry { @[execname] = count(); } BEGIN { printf("ready\n"); }`}, loopName, true},
		{bpfGetppid, []string{c.bpftrace, "-e",
			`BEGIN { printf("ready\n"); } tracepoint:syscalls:sys_enter_getppid { @[comm] = count(); }`}, loopName, false},
		{floorGetppid, []string{c.self, "-floor"}, "", false},
	})
	base, res, err := measureEvents(c, c.m, ts)
	if err != nil {
		return err
	}
	over := printEvents(c, c.m, base, res)
	o, b, f := get(over, oursGetppid), get(over, bpfGetppid), get(over, floorGetppid)
	fmt.Printf("   ratios: ours/bpftrace %s, ours/floor %s, bpftrace/floor %s\n", ratio(o, b), ratio(o, f), ratio(b, f))
	if c.noSyscall == "" {
		fmt.Printf("   target: overhead <= bpftrace's: %s; within 1.5x of the floor: %s\n", verdict(o <= b), verdict(o <= 1.5*f))
	}
	return nil
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
	ts = append(ts, tracer{floorGetppid, []string{c.self, "-floor"}, "", false})
	base, res, err := measureEvents(c, c.m, available(c, ts))
	if err != nil {
		return err
	}
	printEvents(c, c.m, base, res)
	return nil
}

// benchWide is per-event overhead again, under the wide descriptions of
// the attach benchmark: every system call is traced, the loop's getppid()
// calls among them.
func benchWide(c *config) error {
	fmt.Printf("\n== 2b. per-event overhead, wide descriptions: %d rounds of M=%d getppid() calls, alternating\n", c.rounds, c.wideM)
	printWideCommands()
	ts := available(c, wideTracers(c))
	base, res, err := measureEvents(c, c.wideM, ts)
	if err != nil {
		return err
	}
	over := printEvents(c, c.wideM, base, res)
	o, b, r := get(over, oursWide), get(over, bpfWide), get(over, bpfRaw)
	fmt.Printf("   ratios: ours/bpftrace(sys_enter_*) %s, ours/bpftrace(raw_syscalls) %s\n", ratio(o, b), ratio(o, r))
	return nil
}

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
