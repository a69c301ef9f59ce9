//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSyscount builds the example and, as root, runs it on a small shell
// command: every system call is listed once with its count, in
// ascending order of count, exit_group and write among them once each;
// -top keeps the most frequent.
func TestSyscount(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "syscount")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if os.Getuid() != 0 {
		t.Skip("needs root for BPF")
	}
	counts := func(top string) ([]string, map[string]int) {
		out, err := exec.Command(bin, "-top", top, "/bin/sh", "-c", "echo hi >/dev/null; exit 0").Output()
		if err != nil {
			t.Fatalf("syscount: %v\n%s", err, out)
		}
		if !strings.HasPrefix(string(out), "\n") {
			t.Errorf("output does not start with dtrace's closing newline:\n%s", out)
		}
		line := regexp.MustCompile(`^  ([a-z0-9_]+) +([0-9]+)$`)
		var names []string
		n := map[string]int{}
		last := 0
		for _, l := range strings.Split(strings.Trim(string(out), "\n"), "\n") {
			m := line.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("line %q in output:\n%s", l, out)
			}
			c, _ := strconv.Atoi(m[2])
			if _, dup := n[m[1]]; dup || c < last {
				t.Errorf("%s listed twice or out of order:\n%s", m[1], out)
			}
			names, n[m[1]], last = append(names, m[1]), c, c
		}
		return names, n
	}
	all, n := counts("1000")
	if n["exit_group"] != 1 || n["write"] != 1 || len(all) < 5 {
		t.Errorf("exit_group %d, write %d, %d calls; want 1, 1, 5 or more", n["exit_group"], n["write"], len(all))
	}
	top, _ := counts("3")
	if len(top) != 3 || n[top[0]] < n[all[len(all)-4]] {
		t.Errorf("-top 3 listed %v of %v", top, all)
	}
}
