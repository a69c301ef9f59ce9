// Package extest builds and runs the example programs for their tests.
package extest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"
)

// Build builds the example in the test's directory and returns the
// binary's path. Building needs nothing special; running does, so it
// then skips the test unless it runs as root.
func Build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "example")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if os.Getuid() != 0 {
		t.Skip("needs root for BPF")
	}
	return bin
}

// Run runs bin with args and returns its standard output.
func Run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", filepath.Base(bin), err, out)
	}
	return string(out)
}

// Counts reads lines of a name and a count, each matching re (whose two
// groups are the name and the count): the names in order and each one's
// count. A line that does not match, or a name seen twice, fails the
// test.
func Counts(t *testing.T, lines []string, re *regexp.Regexp) ([]string, map[string]int) {
	t.Helper()
	var names []string
	n := map[string]int{}
	for _, l := range lines {
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %q in output:\n%q", l, lines)
		}
		if _, dup := n[m[1]]; dup {
			t.Fatalf("%s listed twice:\n%q", m[1], lines)
		}
		n[m[1]], _ = strconv.Atoi(m[2])
		names = append(names, m[1])
	}
	return names, n
}

// Listing is how an example prints its counts of system calls.
type Listing struct {
	Line       *regexp.Regexp                          // a name and its count
	Body       func(t *testing.T, out string) []string // the count lines of out, once the rest is checked
	Descending bool                                    // most frequent first, else least
}

// Counts runs bin -top top on the shell command command and returns the
// names it lists, in order, and their counts; lines out of order by
// count fail the test.
func (l Listing) Counts(t *testing.T, bin, top, command string) ([]string, map[string]int) {
	t.Helper()
	out := Run(t, bin, "-top", top, "/bin/sh", "-c", command)
	names, n := Counts(t, l.Body(t, out), l.Line)
	if !sort.SliceIsSorted(names, func(i, j int) bool {
		if l.Descending {
			i, j = j, i
		}
		return n[names[i]] < n[names[j]]
	}) {
		t.Errorf("not in order of count (descending %v):\n%s", l.Descending, out)
	}
	return names, n
}
