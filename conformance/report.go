package conformance

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
)

// ExpectedFailures maps test names to the reason they are expected to fail
// today. The file form is one test per line, "name  # reason"; lines
// starting with '#' and blank lines are ignored.
type ExpectedFailures map[string]string

// LoadExpectedFailures reads the list at path; a missing file is an empty
// list.
func LoadExpectedFailures(path string) (ExpectedFailures, error) {
	xf := ExpectedFailures{}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return xf, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, "#")
		xf[strings.TrimSpace(name)] = strings.TrimSpace(reason)
	}
	return xf, sc.Err()
}

// UpdateExpectedFailures returns the list that makes results green: every
// failing test with today's reason. Listed tests that were not run this time
// (filtered out, or skipped) stay listed with their old reason.
func UpdateExpectedFailures(old ExpectedFailures, results []*Result) ExpectedFailures {
	nw := ExpectedFailures{}
	ran := map[string]bool{}
	for _, r := range results {
		if r.Status != Skip {
			ran[r.Test.Name] = true
		}
		if r.Status != Fail {
			continue
		}
		nw[r.Test.Name] = r.Reason
	}
	for name, reason := range old {
		if !ran[name] {
			nw[name] = reason
		}
	}
	return nw
}

// Write writes the list sorted by name, under a header saying how to
// regenerate it.
func (xf ExpectedFailures) Write(w io.Writer) error {
	names := make([]string, 0, len(xf))
	for n := range xf {
		names = append(names, n)
	}
	sort.Strings(names)
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# Conformance tests expected to fail today, one per line: name  # reason.")
	fmt.Fprintln(bw, "# A failing test not listed here fails the run; a listed test that passes")
	fmt.Fprintln(bw, "# is reported so that it can be removed. Regenerate with:")
	fmt.Fprintln(bw, "#   go build -o /tmp/dtrace ./cmd/dtrace && go run ./cmd/dtconform -dtrace /tmp/dtrace -update-xfail")
	for _, n := range names {
		reason := strings.ReplaceAll(xf[n], "\n", " ")
		if reason == "" {
			fmt.Fprintln(bw, n)
			continue
		}
		fmt.Fprintf(bw, "%-60s # %s\n", n, reason)
	}
	return bw.Flush()
}

// WriteFile writes the list to path.
func (xf ExpectedFailures) WriteFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := xf.Write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// DirCount is the tally of one corpus directory.
type DirCount struct {
	Dir                     string
	Passed, Failed, Skipped int
}

// Summary tallies a run against the expected-failures list.
type Summary struct {
	Dirs                    []DirCount
	Passed, Failed, Skipped int
	// D and Shell split the tallies between D programs and shell tests.
	D, Shell DirCount
	// Unexpected are failures not in the list: they fail the run.
	Unexpected []*Result
	// NowPassing are listed tests that passed: the list should shrink.
	NowPassing []*Result
	// Expected counts listed tests that failed.
	Expected int
}

// Summarize tallies results by directory and against xf.
func Summarize(results []*Result, xf ExpectedFailures) *Summary {
	s := &Summary{}
	byDir := map[string]*DirCount{}
	for _, r := range results {
		d := byDir[r.Test.Dir]
		if d == nil {
			d = &DirCount{Dir: r.Test.Dir}
			byDir[r.Test.Dir] = d
		}
		_, listed := xf[r.Test.Name]
		kind := &s.D
		if r.Test.Shell {
			kind = &s.Shell
		}
		switch r.Status {
		case Pass:
			kind.Passed++
			d.Passed++
			s.Passed++
			if listed {
				s.NowPassing = append(s.NowPassing, r)
			}
		case Fail:
			kind.Failed++
			d.Failed++
			s.Failed++
			if listed {
				s.Expected++
			} else {
				s.Unexpected = append(s.Unexpected, r)
			}
		case Skip:
			kind.Skipped++
			d.Skipped++
			s.Skipped++
		}
	}
	for _, d := range byDir {
		s.Dirs = append(s.Dirs, *d)
	}
	sort.Slice(s.Dirs, func(i, j int) bool { return s.Dirs[i].Dir < s.Dirs[j].Dir })
	return s
}

// OK reports whether the run is green: no unexpected failures.
func (s *Summary) OK() bool { return len(s.Unexpected) == 0 }

// Write prints the per-directory table, the unexpected failures, the tests
// now passing, the tallies of D programs and of shell tests, and last,
// alone on its line, "N passed, M failed" counting both.
func (s *Summary) Write(w io.Writer) {
	for _, d := range s.Dirs {
		fmt.Fprintf(w, "%-32s %5d passed %5d failed %5d skipped\n", d.Dir, d.Passed, d.Failed, d.Skipped)
	}
	for _, r := range s.NowPassing {
		fmt.Fprintf(w, "now passing; remove from list: %s\n", r.Test.Name)
	}
	for _, r := range s.Unexpected {
		fmt.Fprintf(w, "unexpected failure: %s: %s\n", r.Test.Name, r.Reason)
	}
	fmt.Fprintf(w, "%d skipped, %d expected failures, %d unexpected failures\n",
		s.Skipped, s.Expected, len(s.Unexpected))
	fmt.Fprintf(w, "D programs: %d passed, %d failed, %d skipped; shell tests: %d passed, %d failed, %d skipped\n",
		s.D.Passed, s.D.Failed, s.D.Skipped, s.Shell.Passed, s.Shell.Failed, s.Shell.Skipped)
	fmt.Fprintf(w, "%d passed, %d failed\n", s.Passed, s.Failed)
}

// Line is the one-line report of a result: verdict, name, and the reason
// or the way it was judged (a pass judged by exit status alone says so).
func (r *Result) Line() string {
	s := fmt.Sprintf("%s %s", r.Status, r.Test.Name)
	if r.Reason != "" {
		s += ": " + r.Reason
	}
	return s
}
