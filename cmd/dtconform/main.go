// Command dtconform runs the dtrace-utils conformance corpus against a
// dtrace binary and prints, per directory, how many tests passed, failed
// and were skipped, then "N passed, M failed". It exits non-zero when a test
// fails that conformance/expected-failures.txt does not list.
//
//	go build -o /tmp/dtrace ./cmd/dtrace
//	go run ./cmd/dtconform -dtrace /tmp/dtrace [-run REGEXP] [-v] [-j N]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/dtrace-go/dtrace/conformance"
)

func main() {
	jsonWrapperMain()
	conformance.TriggerMain()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dtconform", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dtracePath := fs.String("dtrace", "dtrace", "dtrace binary to test")
	runRE := fs.String("run", "", "run only tests whose name (dir/tst.name) matches this regexp")
	verbose := fs.Bool("v", false, "print every test's verdict and the diffs of failures")
	workers := fs.Int("j", 2, "tests to run at once")
	updateXfail := fs.Bool("update-xfail", false, "rewrite the expected-failures list from this run")
	listFailing := fs.Bool("list-failing", false, "print the failing tests with their reasons")
	corpus := fs.String("corpus", "", "corpus root (the dtrace-utils directory); default $"+conformance.CorpusEnv+" or "+conformance.DefaultCorpus)
	xfailPath := fs.String("xfail", "", "expected-failures list (default conformance/expected-failures.txt of this repository)")
	xfailAlso := fs.String("xfail-also", "", "further expected failures of the kernel under test (a guest's): merged into the list for this run, never rewritten")
	timeout := fs.Duration("timeout", conformance.DefaultTimeout*time.Second, "longest a single D program may run (runtest.sh's 41 s)")
	csrc := fs.String("triggers", "", "directory of trigger sources: C programs, and shell scripts for the shell tests' test/triggers (default conformance/triggers of this repository)")
	oformat := fs.String("oformat", "", "json: run every tracing dtrace with -x oformat=json and check its output against the schema instead of judging verdicts")
	schemaPath := fs.String("schema", "", "JSON Schema of -oformat json (default docs/oformat-json.schema.json of this repository)")
	only := fs.String("only", "", "d: only the D programs; sh: only the shell tests (default both)")
	shellTimeout := fs.Duration("shell-timeout", conformance.DefaultShellTimeout, "longest a single shell test may run (runtest.sh's 41 s or the test's longer @@timeout, capped at this)")
	include := fs.String("include", "", "directory of DTrace's <sys/sdt.h> for the shell tests' C programs (default include/ of this repository)")
	if err := fs.Parse(args); err != nil {
		return 2
	}

	repo, err := repoRoot()
	if err != nil {
		fmt.Fprintln(stderr, "dtconform:", err)
		return 2
	}
	root := *corpus
	if root == "" {
		root = os.Getenv(conformance.CorpusEnv)
	}
	if root == "" {
		root = filepath.Join(repo, conformance.DefaultCorpus)
	}
	if *csrc == "" {
		*csrc = filepath.Join(repo, "conformance", "triggers")
	}
	if *xfailPath == "" {
		*xfailPath = filepath.Join(repo, "conformance", "expected-failures.txt")
	}
	var filter *regexp.Regexp
	if *runRE != "" {
		if filter, err = regexp.Compile(*runRE); err != nil {
			fmt.Fprintln(stderr, "dtconform: -run:", err)
			return 2
		}
	}
	dt, err := findDTrace(*dtracePath)
	if err != nil {
		fmt.Fprintln(stderr, "dtconform:", err)
		return 2
	}

	arch := conformance.Machine()
	tests, err := conformance.Discover(root, arch, filter)
	if err != nil {
		fmt.Fprintln(stderr, "dtconform:", err)
		return 2
	}
	if *oformat != "" && *only == "" {
		// The json step checks what D programs print; the shell tests
		// run dtrace in ways (-h, -G, -l) that print no records.
		*only = "d"
	}
	switch *only {
	case "":
	case "d", "sh":
		tests = conformance.OnlyKind(tests, *only == "sh")
	default:
		fmt.Fprintf(stderr, "dtconform: -only %s: want d or sh\n", *only)
		return 2
	}
	if *include == "" {
		*include = filepath.Join(repo, "include")
	}
	xf, err := conformance.LoadExpectedFailures(*xfailPath)
	if err != nil {
		fmt.Fprintln(stderr, "dtconform:", err)
		return 2
	}
	if *xfailAlso != "" {
		if *updateXfail {
			fmt.Fprintln(stderr, "dtconform: -xfail-also and -update-xfail do not go together")
			return 2
		}
		more, err := conformance.LoadExpectedFailures(*xfailAlso)
		if err != nil {
			fmt.Fprintln(stderr, "dtconform:", err)
			return 2
		}
		if len(more) == 0 {
			fmt.Fprintf(stderr, "dtconform: %s: no expected failures (no such file?)\n", *xfailAlso)
			return 2
		}
		for name, reason := range more {
			xf[name] = reason
		}
	}
	tmp, err := os.MkdirTemp("", "dtconform")
	if err != nil {
		fmt.Fprintln(stderr, "dtconform:", err)
		return 2
	}
	defer os.RemoveAll(tmp)
	// dtrace names itself after argv[0] in messages; make sure it is
	// called "dtrace" whatever the binary's file name.
	if filepath.Base(dt) != "dtrace" {
		link := filepath.Join(tmp, "bin", "dtrace")
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err == nil && os.Symlink(dt, link) == nil {
			dt = link
		}
	}
	exe, _ := os.Executable()
	var jsonDir string
	switch *oformat {
	case "":
	case "json":
		// The wrapper is this binary linked as "dtrace"; it finds the
		// real one and its log directory in the environment, which the
		// runner passes on to every test.
		jsonDir = filepath.Join(tmp, "json")
		link := filepath.Join(jsonDir, "bin", "dtrace")
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			fmt.Fprintln(stderr, "dtconform:", err)
			return 2
		}
		if err := os.Symlink(exe, link); err != nil {
			fmt.Fprintln(stderr, "dtconform:", err)
			return 2
		}
		os.Setenv(envJSONDTrace, dt)
		os.Setenv(envJSONLog, jsonDir)
		dt = link
		if *schemaPath == "" {
			*schemaPath = filepath.Join(repo, "docs", "oformat-json.schema.json")
		}
	default:
		fmt.Fprintf(stderr, "dtconform: -oformat %s: only json is checked\n", *oformat)
		return 2
	}
	triggers, err := conformance.NewTriggers(tmp, exe, *csrc)
	if err != nil {
		fmt.Fprintln(stderr, "dtconform:", err)
		return 2
	}

	for name, err := range triggers.BuildErrors {
		fmt.Fprintf(stderr, "dtconform: trigger %s not built: %v\n", name, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := conformance.Config{
		Root:            root,
		DTrace:          dt,
		Workers:         *workers,
		MaxTimeout:      *timeout,
		ShellMaxTimeout: *shellTimeout,
		Triggers:        triggers,
		Arch:            arch,
		FBT:             conformance.KernelHasFBT(),
	}
	if conformance.HasShell(tests) {
		sh, err := conformance.PrepareShell(ctx, conformance.ShellOptions{
			Tmp: tmp, Corpus: root, DTrace: dt, Include: *include, Arch: arch,
			Links: filepath.Join(repo, "conformance", "corpus-links.txt"), Triggers: *csrc,
		})
		if err != nil {
			fmt.Fprintln(stderr, "dtconform: shell tests:", err)
			return 2
		}
		defer sh.Close()
		for name, err := range sh.BuildErrors {
			first, _, _ := strings.Cut(err.Error(), "\n")
			fmt.Fprintf(stderr, "dtconform: %s not built: %s\n", name, first)
		}
		cfg.Shell = sh
	}
	if *verbose {
		cfg.Progress = func(r *conformance.Result) {
			fmt.Fprintln(stdout, r.Line())
			if r.Status == conformance.Fail && r.Diff != "" {
				fmt.Fprint(stdout, r.Diff)
			} else if r.Status == conformance.Fail && r.Test.Shell {
				// A shell test judged by its exit status: what it
				// printed says why.
				fmt.Fprint(stdout, conformance.Tail(conformance.Combine(r.Stdout, r.Stderr), 20))
			}
		}
	}
	results := conformance.Run(ctx, cfg, tests)
	if jsonDir != "" {
		ok, err := jsonReport(stdout, jsonDir, *schemaPath)
		if err != nil {
			fmt.Fprintln(stderr, "dtconform:", err)
			return 2
		}
		if !ok {
			return 1
		}
		return 0
	}
	if !*updateXfail {
		for _, name := range conformance.Retry(ctx, cfg, results, xf) {
			fmt.Fprintf(stdout, "flaky (passed on retry): %s\n", name)
		}
	}

	if *listFailing {
		for _, r := range results {
			if r.Status == conformance.Fail {
				fmt.Fprintln(stdout, r.Line())
			}
		}
	}
	if *updateXfail {
		nw := conformance.UpdateExpectedFailures(xf, results)
		if err := nw.WriteFile(*xfailPath); err != nil {
			fmt.Fprintln(stderr, "dtconform:", err)
			return 2
		}
		fmt.Fprintf(stderr, "dtconform: wrote %d expected failures to %s\n", len(nw), *xfailPath)
		xf = nw
	}
	sum := conformance.Summarize(results, xf)
	sum.Write(stdout)
	if !sum.OK() {
		return 1
	}
	return 0
}

// findDTrace resolves the binary to test: a path, or a name in PATH.
func findDTrace(p string) (string, error) {
	if filepath.Base(p) == p {
		if _, err := os.Stat(p); err != nil {
			return execLookPath(p)
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("dtrace binary: %w", err)
	}
	return abs, nil
}

// repoRoot finds the repository root: the nearest directory above the
// working directory holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return dir, nil
		}
	}
}

func execLookPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("dtrace binary %q not found; build it with go build -o /tmp/dtrace ./cmd/dtrace and pass -dtrace /tmp/dtrace", name)
	}
	return filepath.Abs(p)
}
