package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary serve as the Go trigger programs.
func TestMain(m *testing.M) {
	TriggerMain()
	os.Exit(m.Run())
}

// TestCorpus builds cmd/dtrace and runs the whole conformance corpus, its
// D programs and its shell tests, through the harness. It fails on every failure that
// expected-failures.txt does not list, and logs listed tests that now pass.
// DTCONFORM_RUN (a regexp) narrows the run.
func TestCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("the corpus run is long; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("the conformance corpus needs root (BPF, perf events); run as root")
	}
	root := os.Getenv(CorpusEnv)
	if root == "" {
		root = filepath.Join("..", DefaultCorpus)
	}
	if _, err := os.Stat(filepath.Join(root, unitDir)); err != nil {
		t.Fatalf("corpus not found at %s (set %s): %v", root, CorpusEnv, err)
	}
	root, _ = filepath.Abs(root)

	touchSources(t, "..")
	tmp := t.TempDir()
	dtrace := filepath.Join(tmp, "dtrace")
	build := exec.Command("go", "build", "-o", dtrace, "../cmd/dtrace")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building dtrace: %v\n%s", err, out)
	}

	var filter *regexp.Regexp
	if re := os.Getenv("DTCONFORM_RUN"); re != "" {
		filter = regexp.MustCompile(re)
	}
	arch := Machine()
	tests, err := Discover(root, arch, filter)
	if err != nil {
		t.Fatal(err)
	}
	if filter == nil && len(tests) < 1900 {
		t.Fatalf("only %d tests discovered under %s", len(tests), root)
	}
	xf, err := LoadExpectedFailures("expected-failures.txt")
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	triggers, err := NewTriggers(tmp, exe, "triggers")
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range triggers.BuildErrors {
		t.Logf("trigger %s not built: %v", name, err)
	}
	cfg := Config{
		Root:            root,
		DTrace:          dtrace,
		Workers:         2,
		MaxTimeout:      DefaultTimeout * time.Second,
		ShellMaxTimeout: DefaultShellTimeout,
		Triggers:        triggers,
		Arch:            arch,
		FBT:             KernelHasFBT(),
	}
	if HasShell(tests) {
		include, _ := filepath.Abs(filepath.Join("..", "include"))
		sh, err := PrepareShell(t.Context(), ShellOptions{
			Tmp: tmp, Corpus: root, DTrace: dtrace, Include: include, Arch: arch, Links: "corpus-links.txt", Triggers: "triggers",
		})
		if err != nil {
			t.Fatal(err)
		}
		defer sh.Close()
		for name, err := range sh.BuildErrors {
			first, _, _ := strings.Cut(err.Error(), "\n")
			t.Logf("%s not built: %s", name, first)
		}
		cfg.Shell = sh
	}
	results := Run(t.Context(), cfg, tests)
	for _, name := range Retry(t.Context(), cfg, results, xf) {
		t.Logf("flaky (passed on retry): %s", name)
	}

	sum := Summarize(results, xf)
	var b strings.Builder
	sum.Write(&b)
	t.Log("\n" + b.String())
	for _, r := range sum.NowPassing {
		t.Logf("now passing; remove from expected-failures.txt: %s", r.Test.Name)
	}
	for _, r := range sum.Unexpected {
		t.Errorf("%s: %s\n  dtrace %s\n%s", r.Test.Name, r.Reason, strings.Join(r.Args, " "), r.Diff)
	}
}

// touchSources stats every Go and C source of the module: go test caches a
// test's result keyed by the files the test itself opened or statted, and
// the dtrace binary is built by a subprocess, so without this a cached
// TestCorpus would survive changes to the code it tests.
func touchSources(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".c", ".h", ".mod", ".sum":
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
