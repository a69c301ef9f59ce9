//go:build linux

package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/examples/internal/extest"
)

// TestSyscount builds the example and, as root, runs it on a small shell
// command: after dtrace's closing newline every system call is listed
// once with its count, in ascending order of count, exit_group and write
// among them once each; -top keeps the most frequent.
func TestSyscount(t *testing.T) {
	bin := extest.Build(t)
	l := extest.Listing{Line: regexp.MustCompile(`^  ([a-z0-9_]+) +([0-9]+)$`), Body: func(t *testing.T, out string) []string {
		if !strings.HasPrefix(out, "\n") {
			t.Errorf("output does not start with dtrace's closing newline:\n%s", out)
		}
		return strings.Split(strings.Trim(out, "\n"), "\n")
	}}
	const command = "echo hi >/dev/null; exit 0"
	all, n := l.Counts(t, bin, "1000", command)
	if n["exit_group"] != 1 || n["write"] != 1 || len(all) < 5 {
		t.Errorf("exit_group %d, write %d, %d calls; want 1, 1, 5 or more", n["exit_group"], n["write"], len(all))
	}
	if top, _ := l.Counts(t, bin, "3", command); len(top) != 3 || n[top[0]] < n[all[len(all)-4]] {
		t.Errorf("-top 3 listed %v of %v", top, all)
	}
}
