//go:build linux

// Command dtbench measures our dtrace side by side with bpftrace, in one
// run, alternating the two (ours, theirs, ours, theirs, ...), and prints
// medians and ratios. See bench/README.md.
package main

import (
	"bytes"
	_ "embed"
	"errors"
	"flag"
	"fmt"
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

// getppidNR is getppid's system call number, bpftrace's key for it under
// raw_syscalls (args->id) and the floors' filter.
const getppidNR = unix.SYS_GETPPID

// otherNR is the system call the other-calls benchmark makes instead:
// getpid, as cheap as getppid and traced by none of the programs of the
// getppid benchmarks.
const otherNR = unix.SYS_GETPID

type config struct {
	dtrace, bpftrace string
	// baseline is the other dtrace of -baseline (a binary, or one built
	// from a git revision), run against ours; "" for none.
	baseline, baselineArg string
	builtDtrace           bool // dtbench built ours (readmeBuild), so its size is the README's
	startupRounds         int
	rounds                int
	m, wideM              int64
	cpu                   int
	only                  map[string]bool
	timeout               time.Duration
	verbose               bool
	diag                  bool
	noSyscall             string // why our syscall provider is unavailable; "" if it is available
	tmp                   string
	loop                  []string // argv prefix of the loop program
	self                  string   // this executable (for -floor)
}

func main() {
	if filepath.Base(os.Args[0]) == loopName {
		os.Exit(goLoop(os.Args[1:]))
	}
	var c config
	var only string
	var floor string
	flag.StringVar(&c.dtrace, "dtrace", "", "our dtrace binary (default: go build ./cmd/dtrace of the enclosing module)")
	flag.StringVar(&c.bpftrace, "bpftrace", "", "bpftrace binary (default: bpftrace on $PATH; bench/setup.sh installs it)")
	flag.StringVar(&c.baselineArg, "baseline", "8245bd1", "another dtrace run against ours, alternating: a binary, or a git revision of this repository to build (\"\": none)")
	flag.IntVar(&c.startupRounds, "startup-rounds", 20, "rounds of the start-up benchmark")
	flag.IntVar(&c.rounds, "rounds", 5, "rounds of the per-event and attach benchmarks")
	flag.Int64Var(&c.m, "m", 2000000, "getppid() calls per loop run")
	flag.Int64Var(&c.wideM, "wide-m", 200000, "getppid() calls per loop run under the wide descriptions")
	flag.IntVar(&c.cpu, "cpu", runtime.NumCPU()-1, "CPU to pin the loop program to (-1: none)")
	flag.StringVar(&only, "only", "startup,event,other,attach,wide,stream", "benchmarks to run, comma-separated")
	flag.DurationVar(&c.timeout, "timeout", 120*time.Second, "longest wait for a tracer to become ready or to exit")
	flag.BoolVar(&c.verbose, "v", false, "print every sample")
	flag.BoolVar(&c.diag, "diag", true, "also run ours with -x switchrate=10ms (start-up and attach), to show what the consumer's polling costs")
	flag.StringVar(&floor, "floor", "", "internal: run the floor tracer of this kind (tp, raw, btf, tail, btftail)")
	flag.Parse()
	if floor != "" {
		if err := runFloor(floor); err != nil {
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
		c.builtDtrace = true
	}
	if c.baselineArg != "" {
		if c.baseline, err = buildBaseline(tmp, c.baselineArg); err != nil {
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
	return report()
}

// benches are the benchmarks in the order they run, each with the name
// -only selects it by and what its error says it was.
var benches = []struct {
	name, what string
	run        func(*config) error
}{
	{"startup", "start-up", benchStartup},
	{"event", "per-event overhead", benchEvent},
	{"other", "cost to other system calls", benchOther},
	{"wide", "wide per-event overhead", benchWide},
	{"breakdown", "breakdown", benchBreakdown},
	{"attach", "compile-and-attach", benchAttach},
	{"fbt", "fbt", benchFbt},
	{"fbtscale", "fbt at scale", benchFbtScale},
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
	cmd := readmeBuild(bin)
	cmd.Dir = filepath.Dir(gomod)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	return bin, nil
}

// buildBaseline returns the baseline dtrace of -baseline arg: arg itself
// when it is a file, otherwise a binary built from that git revision of
// the repository enclosing the working directory (git archive into tmp,
// go build there), so that each run of dtbench compares ours with a
// fixed earlier dtrace and a regression shows in the next run.
func buildBaseline(tmp, arg string) (string, error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		return arg, nil
	}
	src := filepath.Join(tmp, "baseline-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	archive := exec.Command("git", "archive", "--format=tar", arg)
	untar := exec.Command("tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", err
	}
	untar.Stdin = pipe
	var errs bytes.Buffer
	archive.Stderr, untar.Stderr = &errs, &errs
	if err := untar.Start(); err != nil {
		return "", err
	}
	if err := archive.Run(); err != nil {
		untar.Wait()
		return "", fmt.Errorf("-baseline %s: not a file, and git archive %s: %v %s", arg, arg, err, errs.String())
	}
	if err := untar.Wait(); err != nil {
		return "", fmt.Errorf("-baseline %s: tar: %v %s", arg, err, errs.String())
	}
	bin := filepath.Join(tmp, "dtrace-baseline")
	cmd := readmeBuild(bin)
	cmd.Dir = src
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("-baseline %s: go build ./cmd/dtrace: %w", arg, err)
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
		fmt.Fprintln(os.Stderr, "usage: getppid-loop M [CPU [NR]]")
		return 2
	}
	m, _ := strconv.ParseInt(args[0], 10, 64)
	nr := uintptr(syscall.SYS_GETPPID)
	if len(args) > 2 {
		n, _ := strconv.Atoi(args[2])
		nr = uintptr(n)
	}
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
		syscall.RawSyscall(nr, 0, 0, 0)
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
	if c.baseline != "" {
		fmt.Printf("baseline: %s (-baseline %s)\n", c.baseline, c.baselineArg)
	}
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

// readmeBuild is the command that builds dtrace as the README tells users
// to (static, no symbol tables), so that start-up, memory and size are
// measured on the binary users run; the baseline is built the same way.
func readmeBuild(bin string) *exec.Cmd {
	cmd := exec.Command("go", "build", "-ldflags=-s -w", "-o", bin, "./cmd/dtrace")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}
