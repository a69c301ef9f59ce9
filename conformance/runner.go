package conformance

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dtrace-go/dtrace/internal/lockedbuf"
)

// Status is the verdict on one test.
type Status int

// Verdicts.
const (
	Pass Status = iota
	Fail
	Skip
)

func (s Status) String() string {
	return [...]string{"PASS", "FAIL", "SKIP"}[s]
}

// Result is the outcome of one test.
type Result struct {
	Test   *Test
	Status Status
	// Reason says why a test failed or was skipped, and for a pass how it
	// was judged when that is less than a full comparison.
	Reason string
	// Diff is the normalized difference from the expected output.
	Diff           string
	Args           []string // dtrace's command line
	ExitCode       int
	TimedOut       bool
	Stdout, Stderr string
	Elapsed        time.Duration
}

// Config says how to run the corpus.
type Config struct {
	// Root is the corpus root: the dtrace-utils directory. dtrace runs in
	// it, so that script paths read test/unittest/<dir>/<name>.d.
	Root string
	// DTrace is the dtrace binary (made absolute by Run).
	DTrace string
	// Workers is how many tests run at once (default 2).
	Workers int
	// MaxTimeout caps each test's @@timeout (default runtest.sh's 41 s,
	// DefaultTimeout: tick-n/tst.tickquality-* run for 25 s).
	MaxTimeout time.Duration
	// Triggers resolves @@trigger programs (nil: none available).
	Triggers *TriggerSet
	// Arch is uname -m, for .ARCH.r files and -DARCH_... (default x86_64).
	Arch string
	// FBT says whether the kernel offers function boundary tracing; when
	// false, tests that need fbt probes are skipped with that reason.
	FBT bool
	// Shell is the setup of the shell tests (PrepareShell); without it
	// they are skipped.
	Shell *ShellSetup
	// ShellMaxTimeout caps a shell test's time limit (runtest.sh's 41 s,
	// or the test's longer @@timeout); 0 leaves it uncapped.
	ShellMaxTimeout time.Duration
	// Progress, if set, is called with each result as it completes (from
	// one goroutine at a time).
	Progress func(*Result)
}

// cppArgs are the preprocessor flags runtest.sh gives dtrace through the
// environment so that cpp's messages match the expected outputs (no column
// numbers, no caret lines, no colours).
const cppArgs = "-fno-diagnostics-show-caret -fdiagnostics-color=never -fno-diagnostics-show-option -fno-show-column"

// outputLimit bounds the output kept from one test.
const outputLimit = 4 << 20

// gracePeriod is how long dtrace gets to finish after SIGINT on timeout.
const gracePeriod = 2 * time.Second

// Run runs tests and returns their results in the order of tests.
func Run(ctx context.Context, cfg Config, tests []*Test) []*Result {
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = DefaultTimeout * time.Second
	}
	if cfg.Arch == "" {
		cfg.Arch = "x86_64"
	}
	if abs, err := filepath.Abs(cfg.DTrace); err == nil {
		cfg.DTrace = abs
	}
	results := make([]*Result, len(tests))
	work := make(chan int)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < cfg.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				r := runOne(ctx, &cfg, tests[i])
				results[i] = r
				if cfg.Progress != nil {
					mu.Lock()
					cfg.Progress(r)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range tests {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	for i, r := range results {
		if r == nil {
			results[i] = &Result{Test: tests[i], Status: Skip, Reason: "run cancelled"}
		}
	}
	return results
}

// fbtRE finds fbt probe descriptions in a script.
var fbtRE = regexp.MustCompile(`(^|[^A-Za-z0-9_$])fbt:`)

// skipReason says why t cannot run here, or "".
func skipReason(cfg *Config, t *Test, text string) string {
	if t.Skipped {
		if t.Skip != "" {
			return "@@skip: " + t.Skip
		}
		return "@@skip"
	}
	if name := triggerName(t); name != "" {
		if _, ok := cfg.Triggers.Lookup(name); !ok {
			return "needs trigger " + name + " (not written yet)"
		}
	}
	if !cfg.FBT && t.Kind != KindErr && (strings.HasPrefix(t.Dir, "fbtprovider") || fbtRE.MatchString(text)) {
		return "needs fbt: this kernel offers neither kprobes nor fentry"
	}
	return ""
}

// triggerName is the program of @@trigger, or "" for none.
func triggerName(t *Test) string {
	f := strings.Fields(t.Trigger)
	if len(f) == 0 || f[0] == "none" {
		return ""
	}
	return f[0]
}

// Command returns dtrace's arguments for t (without the binary), with
// trigger the resolved trigger command for -c ("" if none or if the test
// takes the trigger's pid as $_pid instead), and pid the value of $_pid.
func Command(t *Test, arch, trigger string, pid int) ([]string, error) {
	var args []string
	switch {
	case t.Kind == KindErr && strings.HasPrefix(t.Tag, "D_"):
		args = append(args, "-xerrtags")
	case t.Kind == KindDrp:
		args = append(args, "-xdroptags")
	}
	args = append(args, "-DARCH_"+arch)
	if trigger != "" {
		args = append(args, "-c", trigger)
	}
	args = append(args, "-s", t.Path)
	opts := t.RuntestOpts
	if pid > 0 {
		opts = strings.ReplaceAll(opts, "$_pid", strconv.Itoa(pid))
	}
	words, err := SplitWords(opts)
	if err != nil {
		return nil, err
	}
	return append(args, words...), nil
}

func runOne(ctx context.Context, cfg *Config, t *Test) *Result {
	if t.Shell {
		return runShell(ctx, cfg, t)
	}
	r := &Result{Test: t}
	start := time.Now()
	defer func() { r.Elapsed = time.Since(start) }()
	text, err := os.ReadFile(filepath.Join(cfg.Root, t.Path))
	if err != nil {
		r.Status, r.Reason = Fail, err.Error()
		return r
	}
	if why := skipReason(cfg, t, string(text)); why != "" {
		r.Status, r.Reason = Skip, why
		return r
	}

	// Triggers: with $_pid the trigger runs beside dtrace and its pid is
	// substituted; otherwise dtrace runs it with -c (it is $target).
	var trig *trigger
	triggerCmd, pid := "", 0
	if name := triggerName(t); name != "" {
		path, _ := cfg.Triggers.Lookup(name)
		args := strings.Fields(t.Trigger)[1:]
		if strings.Contains(t.RuntestOpts, "$_pid") {
			trig, err = startTrigger(path, args, t.TriggerTiming, filepath.Join(cfg.Root, t.Path))
			if err != nil {
				r.Status, r.Reason = Fail, "starting trigger: "+err.Error()
				return r
			}
			pid = trig.pid()
			defer stopProcess(trig)
		} else {
			triggerCmd = strings.Join(append([]string{path}, args...), " ")
		}
	}
	args, err := Command(t, cfg.Arch, triggerCmd, pid)
	if err != nil {
		r.Status, r.Reason = Fail, err.Error()
		return r
	}
	r.Args = args

	timeout := time.Duration(t.Timeout) * time.Second
	if timeout > cfg.MaxTimeout {
		timeout = cfg.MaxTimeout
	}
	cmd := exec.Command(cfg.DTrace, args...)
	interp := ""
	if isInterpreterFile(text) && triggerCmd == "" {
		// As runtest.sh: an interpreter file ("#!dtrace -qs") is copied
		// with its #! naming the dtrace under test and executed, so that
		// the kernel passes the #! line's options; the copy's name is
		// the test's again in the output.
		interp, err = writeInterpreterFile(cfg.DTrace, text)
		if err != nil {
			r.Status, r.Reason = Fail, err.Error()
			return r
		}
		defer os.Remove(interp)
		cmd = exec.Command(interp, withoutScript(args, t.Path)...)
	}
	cmd.Dir = cfg.Root
	// _test names the test for triggers, as runtest.sh exports it.
	cmd.Env = append(os.Environ(), "_DTRACE_TESTING=t", "LANGUAGE=C", "DTRACE_OPT_CPPARGS="+cppArgs,
		"_test="+filepath.Join(cfg.Root, t.Path))
	stdout, stderr := &lockedbuf.Buffer{Limit: outputLimit}, &lockedbuf.Buffer{Limit: outputLimit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Status, r.Reason = Fail, "starting dtrace: "+err.Error()
		return r
	}
	// Let dtrace stop cleanly (END, aggregations), then insist.
	r.TimedOut = waitStopping(ctx, cmd, timeout, gracePeriod, func() { _ = cmd.Process.Signal(syscall.SIGINT) })
	r.ExitCode = exitCode(cmd.ProcessState)
	r.Stdout, r.Stderr = stdout.String(), stderr.String()
	if interp != "" {
		r.Stdout = strings.ReplaceAll(r.Stdout, interp, t.Path)
		r.Stderr = strings.ReplaceAll(r.Stderr, interp, t.Path)
	}
	judge(cfg, t, r)
	return r
}

// isInterpreterFile reports a test whose first word is "#!dtrace", one
// runtest.sh executes rather than hands to dtrace -s.
func isInterpreterFile(text []byte) bool {
	f := strings.Fields(strings.SplitN(string(text), "\n", 2)[0])
	return len(f) > 0 && f[0] == "#!dtrace"
}

// writeInterpreterFile writes an executable copy of an interpreter file
// whose #! line names dtrace, the binary under test, and returns its path.
func writeInterpreterFile(dtrace string, text []byte) (string, error) {
	f, err := os.CreateTemp("", "dtconform-interp-*.d")
	if err != nil {
		return "", err
	}
	body := strings.Replace(string(text), "#!dtrace ", "#!"+dtrace+" ", 1)
	_, err = f.WriteString(body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o755)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// withoutScript returns args without the "-s path" Command put in: what
// is left are runtest.sh's raw flags, passed after an interpreter file.
func withoutScript(args []string, path string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == "-s" && i+1 < len(args) && args[i+1] == path {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// waitStopping waits for cmd, started in a process group of its own
// (Setpgid). When timeout passes or ctx is done before it exits, it calls
// stop and, if the command has not exited grace later, kills its group;
// it reports whether the timeout passed. Whatever the command leaves in
// its group (-c children, a script's commands) is killed when it exits.
func waitStopping(ctx context.Context, cmd *exec.Cmd, timeout, grace time.Duration, stop func()) (timedOut bool) {
	pgid := cmd.Process.Pid
	done, watcherDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watcherDone)
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		select {
		case <-done:
			return
		case <-ctx.Done():
		case <-timer.C:
			timedOut = true
		}
		stop()
		select {
		case <-done:
		case <-time.After(grace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}()
	_ = cmd.Wait()
	close(done)
	<-watcherDone
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return timedOut
}

// startTrigger starts a trigger for a $_pid test. Unless the timing is
// "before", it waits (1 s, or the given seconds) and then execs the
// program, so that its pid is known before dtrace starts but it runs after.
func startTrigger(path string, args []string, timing, testPath string) (*trigger, error) {
	delay := "1"
	switch t := strings.TrimSpace(timing); {
	case t == "before":
		delay = ""
	case t == "" || t == "after":
	default:
		if _, err := strconv.ParseFloat(t, 64); err == nil {
			delay = t
		}
	}
	var cmd *exec.Cmd
	if delay == "" {
		cmd = exec.Command(path, args...)
	} else {
		cmd = exec.Command("/bin/sh", append([]string{"-c", `sleep ` + delay + `; exec "$0" "$@"`, path}, args...)...)
	}
	cmd.Env = append(os.Environ(), "_test="+testPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	tr := &trigger{cmd: cmd, reaped: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(tr.reaped)
	}()
	return tr, nil
}

// trigger is a started trigger. It is reaped as soon as it exits, as
// runtest.sh's bash reaps its background jobs, so that its pid is gone
// then rather than left a zombie until the test ends (pid/tst.restartloop
// runs dtrace -p on it until that fails).
type trigger struct {
	cmd    *exec.Cmd
	reaped chan struct{}
}

// pid is the trigger's process id.
func (tr *trigger) pid() int { return tr.cmd.Process.Pid }

// stopProcess kills what is left of a trigger's process group and waits
// until the trigger is reaped.
func stopProcess(tr *trigger) {
	_ = syscall.Kill(-tr.pid(), syscall.SIGKILL)
	<-tr.reaped
}

func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// judge decides r.Status as the corpus README says.
func judge(cfg *Config, t *Test, r *Result) {
	var why []string
	want := 0
	if t.Kind == KindErr {
		want = 1
	}
	switch {
	case r.TimedOut && triggerName(t) != "":
		// A test with a workload may legitimately run until stopped.
	case r.TimedOut:
		why = append(why, fmt.Sprintf("timed out after %ds", min(t.Timeout, int(cfg.MaxTimeout/time.Second))))
	case r.ExitCode != want:
		if r.ExitCode > 128 {
			why = append(why, fmt.Sprintf("killed by signal %d", r.ExitCode-128))
		} else {
			why = append(why, fmt.Sprintf("exit status %d, want %d", r.ExitCode, want))
		}
	}
	if t.Tag != "" && !strings.Contains(r.Stderr, "["+t.Tag+"]") {
		why = append(why, "stderr lacks ["+t.Tag+"]")
	}
	note := ""
	switch {
	case t.Expected == "":
	case t.Postprocessed:
		// The original filtered these outputs with scripts we do not have;
		// compare anyway, for information only.
		note = "exit status only: output postprocessed in the original"
		if exp, err := os.ReadFile(filepath.Join(cfg.Root, t.Expected)); err == nil {
			if ok, diff := Compare(string(exp), Combine(r.Stdout, r.Stderr), t.NoSort); ok {
				note += " (unfiltered output matches too)"
			} else {
				note += " (unfiltered output differs)"
				r.Diff = diff
			}
		}
	default:
		exp, err := os.ReadFile(filepath.Join(cfg.Root, t.Expected))
		if err != nil {
			why = append(why, err.Error())
			break
		}
		if ok, diff := Compare(string(exp), Combine(r.Stdout, r.Stderr), t.NoSort); !ok {
			why = append(why, "expected results differ")
			r.Diff = diff
		}
	}
	if len(why) > 0 {
		r.Status, r.Reason = Fail, strings.Join(why, "; ")
		return
	}
	r.Status, r.Reason = Pass, note
}

// KernelHasFBT reports whether the running kernel can instrument kernel
// functions: it looks for the kprobes core in /proc/kallsyms (fentry and
// fexit are refused on the machines we target, so kprobes decide).
func KernelHasFBT() bool {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasSuffix(sc.Text(), " register_kprobe") {
			return true
		}
	}
	return false
}

// Machine returns uname -m.
func Machine() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return "x86_64"
	}
	var b strings.Builder
	for _, c := range u.Machine {
		if c == 0 {
			break
		}
		b.WriteByte(byte(c))
	}
	return b.String()
}

// Retry runs again, once, the failed tests that xf does not list, and
// replaces their results: a test that passes the second time is reported
// as a pass that needed a retry, so that a flaky test does not fail the
// run but is still visible. It returns those tests as "name: first
// failure".
func Retry(ctx context.Context, cfg Config, results []*Result, xf ExpectedFailures) []string {
	var again []*Test
	var idx []int
	for i, r := range results {
		if _, listed := xf[r.Test.Name]; r.Status == Fail && !listed {
			again = append(again, r.Test)
			idx = append(idx, i)
		}
	}
	if len(again) == 0 {
		return nil
	}
	// The retry runs one test at a time with up to three times the
	// time limit (within the test's own, 41 s by default): the tests
	// that fail under load are the ones that wait for an idle CPU or a
	// quiet machine.
	cfg.Progress = nil
	cfg.Workers = 1
	cfg.MaxTimeout *= 3
	var flaky []string
	for k, r := range Run(ctx, cfg, again) {
		if r.Status == Pass {
			first := results[idx[k]].Reason
			r.Reason = strings.TrimPrefix(r.Reason+"; passed on retry (first run: "+first+")", "; ")
			flaky = append(flaky, r.Test.Name+": "+first)
		}
		results[idx[k]] = r
	}
	return flaky
}
