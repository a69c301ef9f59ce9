//go:build linux

package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/examples/internal/extest"
)

// TestSyscalls builds the example and, as root, runs it on a small shell
// command: the calls come most frequent first, each once, exit_group
// once and write twice, and the bytes written are the two echoes'.
func TestSyscalls(t *testing.T) {
	bin := extest.Build(t)
	l := extest.Listing{Line: regexp.MustCompile(`^([a-z0-9_]+) +([0-9]+)$`), Descending: true, Body: func(t *testing.T, out string) []string {
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) < 3 || lines[0] != "SYSCALL                 COUNT" || lines[len(lines)-1] != "bytes written: 9" {
			t.Fatalf("output:\n%s", out)
		}
		return lines[1 : len(lines)-1]
	}}
	const command = "echo hello; echo ab >/dev/null"
	all, n := l.Counts(t, bin, "1000", command)
	if n["exit_group"] != 1 || n["write"] != 2 || len(all) < 5 {
		t.Errorf("exit_group %d, write %d, %d calls; want 1, 2, 5 or more", n["exit_group"], n["write"], len(all))
	}
	if top, _ := l.Counts(t, bin, "3", command); len(top) != 3 || n[top[2]] < n[all[3]] {
		t.Errorf("-top 3 listed %v of %v", top, all)
	}
}
