package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// This file runs a shell test as runtest.sh runs one (its "progtype
// shell"): the script gets the dtrace under test as its only argument,
// runs in the corpus root with runtest.sh's environment, and is judged by
// its exit status and by its output after the test's .r.p filter.

// shellDefaultTimeout is runtest.sh's DEFAULT_TIMEOUT: a test's @@timeout
// counts only when it is longer.
const shellDefaultTimeout = 41

// skipStatus is the exit status by which a shell test says that this
// machine cannot run it.
const skipStatus = 67

// timeoutStatus is timeout(1)'s exit status for a command it stopped.
const timeoutStatus = 124

// shellKillAfter is runtest.sh's TIMEOUTKIL: SIGKILL follows SIGTERM
// after this long.
const shellKillAfter = 5 * time.Second

// checkProvider is runtest.sh's exported check_provider function, in the
// form bash imports functions from the environment.
const checkProvider = `() {  grep -q "^$1\$" $tmpdir/providers
}`

// runShell runs the shell test t and judges it.
func runShell(ctx context.Context, cfg *Config, t *Test) *Result {
	r := &Result{Test: t}
	start := time.Now()
	defer func() { r.Elapsed = time.Since(start) }()
	sh := cfg.Shell
	switch {
	case t.Skipped:
		r.Status, r.Reason = Skip, "@@skip"
		if t.Skip != "" {
			r.Reason += ": " + t.Skip
		}
		return r
	case sh == nil:
		r.Status, r.Reason = Skip, "shell tests not set up"
		return r
	}
	tmpdir, err := sh.newTmpdir()
	if err != nil {
		r.Status, r.Reason = Fail, err.Error()
		return r
	}
	defer os.RemoveAll(tmpdir)
	env := sh.environ(cfg, t, tmpdir)
	expect, why := sh.expectation(ctx, t, env)
	if expect == 2 {
		r.Status, r.Reason = Skip, strings.TrimSuffix(".x: "+why, ": ")
		return r
	}
	for attempt := 0; ; attempt++ {
		r = sh.runOnce(ctx, cfg, t, env, tmpdir)
		if r.Status != Fail || attempt >= t.Reinvoke {
			if attempt > 0 {
				r.Reason = strings.TrimPrefix(fmt.Sprintf("%s; after %d reinvocations", r.Reason, attempt), "; ")
			}
			break
		}
	}
	r.Elapsed = time.Since(start)
	if expect == 1 && r.Status == Fail {
		r.Reason += "; its .x expects failure here"
		if why != "" {
			r.Reason += ": " + why
		}
	}
	return r
}

// newTmpdir makes the test's tmpdir with what runtest.sh keeps in its
// own: bin/ (first in PATH) and the providers file.
func (sh *ShellSetup) newTmpdir() (string, error) {
	dir := filepath.Join(sh.tmp, strconv.FormatInt(sh.seq.Add(1), 10))
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, "providers"), sh.Providers, 0o644)
}

// environ is runtest.sh's environment for t: the variables it exports
// (dt_flags and _pid are added per run).
func (sh *ShellSetup) environ(cfg *Config, t *Test, tmpdir string) []string {
	timeout := max(shellDefaultTimeout, t.Timeout)
	env := []string{
		"LC_COLLATE=C",
		"_DTRACE_TESTING=t",
		"LANGUAGE=C",
		"DTRACE_OPT_CPPARGS=" + cppArgs,
		"DTRACE_OPT_DEBUGASSERT=mutexes",
		"tmpdir=" + tmpdir,
		"PATH=" + filepath.Join(tmpdir, "bin") + string(filepath.ListSeparator) + os.Getenv("PATH"),
		"dtrace=" + cfg.DTrace,
		"test_cppflags=" + sh.CPPFlags,
		"test_libdir=installed",
		"timeout=" + strconv.Itoa(timeout),
		"_test=" + t.Path,
		"tst=" + strings.TrimSuffix(t.Path, ".sh"),
		"BASH_FUNC_check_provider%%=" + checkProvider,
	}
	if sh.Include != "" {
		// DTrace's <sys/sdt.h> where a compiler run without flags
		// finds it, as on dtrace-utils' test machines, where its
		// devel package installs it in /usr/include (the tests that
		// build a USDT program with gcc -m32 find no other: Debian's
		// SystemTap header is in the 64-bit multiarch directory).
		env = append(env, "C_INCLUDE_PATH="+sh.Include, "CPLUS_INCLUDE_PATH="+sh.Include)
	}
	// Ours win over the inherited ones of the same name.
	mine := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		mine[k] = true
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !mine[k] && k != "dt_flags" && k != "_pid" {
			env = append(env, kv)
		}
	}
	return env
}

// expectation runs the .x programs of t as runtest.sh does: the test's
// own ($base.$arch.x or $base.x), then test.x (or test.$arch.x) of each
// directory up to the root; the highest status wins (0 run, 1 expected to
// fail, 2 skip) with its message.
func (sh *ShellSetup) expectation(ctx context.Context, t *Test, env []string) (int, string) {
	status, msg := 0, ""
	base := strings.TrimSuffix(t.Path, ".sh")
	for dir := filepath.Dir(t.Path); status < 2; dir = filepath.Dir(dir) {
		xfile := base + "." + archOf(env) + ".x"
		if _, err := os.Stat(filepath.Join(sh.Root, xfile)); err != nil {
			xfile = base + ".x"
		}
		st, err := os.Stat(filepath.Join(sh.Root, xfile))
		switch {
		case err != nil:
		case st.Mode()&0o111 != 0:
			cmd := exec.CommandContext(ctx, xfile)
			cmd.Dir, cmd.Env = sh.Root, env
			out, err := cmd.Output()
			s := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				s = min(ee.ExitCode(), 2)
				if s < 0 {
					s = 2
				}
			} else if err != nil {
				s = 2
				out = []byte(err.Error())
			}
			if s > status {
				status, msg = s, strings.TrimSpace(string(out))
			}
		case status == 0:
			status = 1
		}
		if dir == "." || dir == "/" {
			break
		}
		base = filepath.Join(dir, "test")
	}
	return status, msg
}

// archOf finds the architecture in test_cppflags' -DARCH_.
func archOf(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "test_cppflags=-DARCH_"); ok {
			return strings.Fields(v)[0]
		}
	}
	return Machine()
}

// dtFlags is runtest.sh's dt_flags for a shell test: test_cppflags, then
// -xerrtags for err.D_* tests, then @@runtest-opts.
func (sh *ShellSetup) dtFlags(t *Test) string {
	flags := sh.CPPFlags
	if t.Kind == KindErr && strings.HasPrefix(t.Tag, "D_") {
		flags += " -xerrtags"
	}
	if t.RuntestOpts != "" {
		flags += " " + t.RuntestOpts
	}
	return flags
}

// runOnce is one invocation of a shell test, judged.
func (sh *ShellSetup) runOnce(ctx context.Context, cfg *Config, t *Test, env []string, tmpdir string) *Result {
	r := &Result{Test: t}
	flags := sh.dtFlags(t)
	args := []string{cfg.DTrace}
	pid := ""
	if name := triggerName(t); name != "" {
		trig := filepath.Join(sh.Root, "test", "triggers", name)
		if st, err := os.Stat(trig); err != nil || st.Mode()&0o111 == 0 {
			r.Status, r.Reason = Fail, "trigger "+name+" not found in test/triggers"
			return r
		}
		targs := strings.Fields(t.Trigger)[1:]
		if timing := strings.TrimSpace(t.TriggerTiming); timing == "" || timing == "synchro" {
			// The script gets the trigger as a second argument and
			// dt_flags ends in -c, as runtest.sh arranges it.
			flags += " -c "
			args = append(args, strings.Join(append([]string{"test/triggers/" + name}, targs...), " "))
		} else {
			tr, err := startTrigger(trig, targs, timing, t.Path)
			if err != nil {
				r.Status, r.Reason = Fail, "starting trigger: "+err.Error()
				return r
			}
			defer stopProcess(tr)
			pid = strconv.Itoa(tr.pid())
			flags = strings.ReplaceAll(flags, "$_pid", pid)
		}
	}
	env = append(env[:len(env):len(env)], "dt_flags="+flags, "_pid="+pid)

	timeout := timeoutOf(cfg, t)
	outPath, errPath := filepath.Join(tmpdir, "test.out"), filepath.Join(tmpdir, "test.err")
	status, timedOut, err := runScript(ctx, sh.Root, t.Path, args, env, outPath, errPath, timeout)
	if err != nil {
		r.Status, r.Reason = Fail, err.Error()
		return r
	}
	r.Args = append([]string{t.Path}, args...)
	r.ExitCode, r.TimedOut = status, timedOut
	stdout, _ := os.ReadFile(outPath)
	stderr, _ := os.ReadFile(errPath)
	r.Stdout, r.Stderr = string(stdout), shellStderr(string(stderr))
	sh.judge(ctx, cfg, t, r, env)
	return r
}

// runScript runs script (relative to dir) with args, stdout and stderr in
// files as runtest.sh keeps them, and stops it as timeout(1) with
// --kill-after does: SIGTERM to its process group when time is up, SIGKILL
// shellKillAfter later. What the script leaves running in its group is
// killed when it exits.
func runScript(ctx context.Context, dir, script string, args, env []string, outPath, errPath string, timeout time.Duration) (status int, timedOut bool, err error) {
	stdout, err := os.Create(outPath)
	if err != nil {
		return 0, false, err
	}
	defer stdout.Close()
	stderr, err := os.Create(errPath)
	if err != nil {
		return 0, false, err
	}
	defer stderr.Close()
	cmd := exec.Command(script, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return 0, false, fmt.Errorf("starting %s: %v", script, err)
	}
	pgid := cmd.Process.Pid
	timedOut = waitStopping(ctx, cmd, timeout, shellKillAfter, func() { _ = syscall.Kill(-pgid, syscall.SIGTERM) })
	if timedOut {
		return timeoutStatus, true, nil
	}
	return exitCode(cmd.ProcessState), false, nil
}

// shellStderr is stderr as runtest.sh compares it: libdtrace's debugging
// lines moved out, and CTF's older wording of one message.
func shellStderr(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" && !debugRE.MatchString(l) {
			b.WriteString(l)
		}
	}
	return strings.ReplaceAll(b.String(), "Invalid member name", "Member name not found")
}

// lastLineRE finds the last non-blank line of a text.
var lastLineRE = regexp.MustCompile(`(?m)^.*\S.*$`)

// judge decides a shell test's verdict in runtest.sh's order of
// precedence: the postprocessor, the comparison, the expected tag, a
// timeout, exit status 67, the exit status.
func (sh *ShellSetup) judge(ctx context.Context, cfg *Config, t *Test, r *Result, env []string) {
	var why []string
	output := r.Stdout
	if r.Stderr != "" {
		output += StderrSeparator + "\n" + r.Stderr
	}
	filter := strings.TrimSuffix(t.Path, ".sh") + ".r.p"
	if st, err := os.Stat(filepath.Join(sh.Root, filter)); err == nil && st.Mode()&0o111 != 0 {
		cmd := exec.CommandContext(ctx, filter)
		cmd.Dir, cmd.Env = sh.Root, env
		cmd.Stdin = strings.NewReader(output)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if out, err := cmd.Output(); err != nil {
			why = append(why, fmt.Sprintf("results postprocessor failed: %v: %s", err, strings.TrimSpace(stderr.String())))
		} else {
			output = string(out)
		}
	}
	if t.Expected != "" {
		exp, err := os.ReadFile(filepath.Join(cfg.Root, t.Expected))
		if err != nil {
			why = append(why, err.Error())
		} else if ok, diff := Compare(string(exp), output, t.NoSort); !ok {
			why = append(why, "expected results differ")
			r.Diff = diff
		}
	}
	want := 0
	if t.Kind == KindErr {
		want = 1
	}
	switch {
	case t.Tag != "" && !strings.Contains(r.Stderr, "["+t.Tag+"]"):
		why = append(why, "stderr lacks ["+t.Tag+"]")
	case r.TimedOut && !t.TimeoutSuccess:
		why = append(why, fmt.Sprintf("timed out after %ds", int(timeoutOf(cfg, t)/time.Second)))
	case r.ExitCode == skipStatus && want == 0:
		reason := "exit status 67 (cannot run here)"
		if line := lastLineRE.FindAllString(r.Stdout+"\n"+r.Stderr, -1); len(line) > 0 {
			reason += ": " + strings.TrimSpace(line[len(line)-1])
		}
		r.Status, r.Reason = Skip, reason
		return
	case r.ExitCode != want && !r.TimedOut:
		if r.ExitCode > 128 && r.ExitCode < 194 {
			why = append(why, fmt.Sprintf("killed by signal %d", r.ExitCode-128))
		} else {
			why = append(why, fmt.Sprintf("exit status %d, want %d", r.ExitCode, want))
		}
	}
	if strings.Contains(r.Stdout+r.Stderr, "Cannot allocate memory") && len(why) > 0 {
		why = append(why, "out of memory")
	}
	if len(why) > 0 {
		r.Status, r.Reason = Fail, strings.Join(why, "; ")
		return
	}
	r.Status = Pass
}

// timeoutOf is a shell test's time limit.
func timeoutOf(cfg *Config, t *Test) time.Duration {
	d := time.Duration(max(shellDefaultTimeout, t.Timeout)) * time.Second
	if cfg.ShellMaxTimeout > 0 && d > cfg.ShellMaxTimeout {
		d = cfg.ShellMaxTimeout
	}
	return d
}
