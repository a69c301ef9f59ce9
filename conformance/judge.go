package conformance

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// StderrSeparator separates stdout from stderr in expected-output files.
const StderrSeparator = "-- @@stderr --"

var (
	hexRE   = regexp.MustCompile(`0x[0-9a-f]+`)
	bpfPcRE = regexp.MustCompile(`at BPF pc [0-9]+`)
	// valgrindRE marks lines the original filter leaves alone.
	valgrindRE = regexp.MustCompile(`^==[0-9]+== `)
	// debugRE matches libdtrace debugging lines, which runtest.sh moves out
	// of stderr before comparing.
	debugRE = regexp.MustCompile(`^[a-z]+ DEBUG [0-9]+: `)
)

// Combine builds the text compared with an expected-output file exactly as
// runtest.sh does: stdout, then, only when stderr is not empty, the
// separator line and stderr (appended as is, even after a stdout that does
// not end in a newline). libdtrace debugging lines are dropped from stderr.
func Combine(stdout, stderr string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if l != "" && !debugRE.MatchString(l) {
			b.WriteString(l)
		}
	}
	if b.Len() == 0 {
		return stdout
	}
	return stdout + StderrSeparator + "\n" + b.String()
}

// Normalize applies the corpus's normalization to one side of a
// comparison: every 0x[0-9a-f]+ becomes {ptr} and "at BPF pc N" becomes
// "at BPF pc NNN".
func Normalize(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if valgrindRE.MatchString(l) {
			continue
		}
		l = hexRE.ReplaceAllString(l, "{ptr}")
		lines[i] = bpfPcRE.ReplaceAllString(l, "at BPF pc NNN")
	}
	return strings.Join(lines, "")
}

// Compare reports whether actual matches expected after normalization,
// sorting the lines of both unless nosort; when they differ it returns a
// diff (expected lines with "-", actual with "+").
func Compare(expected, actual string, nosort bool) (bool, string) {
	e := splitLines(Normalize(expected))
	a := splitLines(Normalize(actual))
	if !nosort {
		sort.Strings(e)
		sort.Strings(a)
	}
	if slices.Equal(e, a) {
		return true, ""
	}
	return false, Diff(e, a)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// Diff is a small line diff (longest common subsequence) of want and got,
// showing only changed lines with a line of context, enough to read a
// failing test.
func Diff(want, got []string) string {
	n, m := len(want), len(got)
	if n*m > 4_000_000 { // too big for the table: show both sides' heads
		return fmt.Sprintf("(outputs too large to diff: %d expected lines, %d actual)\n", n, m)
	}
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		c    byte
		line string
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && want[i] == got[j]:
			ops = append(ops, op{' ', want[i]})
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			ops = append(ops, op{'+', got[j]})
			j++
		default:
			ops = append(ops, op{'-', want[i]})
			i++
		}
	}
	var b strings.Builder
	lastShown := -2
	for k, o := range ops {
		show := o.c != ' '
		if !show {
			// One line of context around changes.
			if (k > 0 && ops[k-1].c != ' ') || (k+1 < len(ops) && ops[k+1].c != ' ') {
				show = true
			}
		}
		if !show {
			continue
		}
		if lastShown >= 0 && k > lastShown+1 {
			b.WriteString("...\n")
		}
		fmt.Fprintf(&b, "%c%q\n", o.c, o.line)
		lastShown = k
	}
	return b.String()
}

// Tail is the last n lines of text, each quoted as Diff quotes them.
func Tail(text string, n int) string {
	lines := splitLines(text)
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, " %q\n", l)
	}
	return b.String()
}
