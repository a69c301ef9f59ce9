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

// TestSyscalls builds the example and, as root, runs it on a small shell
// command: the calls come most frequent first, each once, exit_group
// once and write twice, and the bytes written are the two echoes'.
func TestSyscalls(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "syscalls")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if os.Getuid() != 0 {
		t.Skip("needs root for BPF")
	}
	run := func(top string) (names []string, n map[string]int) {
		out, err := exec.Command(bin, "-top", top, "/bin/sh", "-c", "echo hello; echo ab >/dev/null").Output()
		if err != nil {
			t.Fatalf("syscalls: %v\n%s", err, out)
		}
		lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if len(lines) < 3 || lines[0] != "SYSCALL                 COUNT" || lines[len(lines)-1] != "bytes written: 9" {
			t.Fatalf("output:\n%s", out)
		}
		line := regexp.MustCompile(`^([a-z0-9_]+) +([0-9]+)$`)
		n = map[string]int{}
		last := 1 << 30
		for _, l := range lines[1 : len(lines)-1] {
			m := line.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("line %q in output:\n%s", l, out)
			}
			c, _ := strconv.Atoi(m[2])
			if _, dup := n[m[1]]; dup || c > last {
				t.Errorf("%s listed twice or out of order:\n%s", m[1], out)
			}
			names, n[m[1]], last = append(names, m[1]), c, c
		}
		return names, n
	}
	all, n := run("1000")
	if n["exit_group"] != 1 || n["write"] != 2 || len(all) < 5 {
		t.Errorf("exit_group %d, write %d, %d calls; want 1, 2, 5 or more", n["exit_group"], n["write"], len(all))
	}
	if top, _ := run("3"); len(top) != 3 || n[top[2]] < n[all[3]] {
		t.Errorf("-top 3 listed %v of %v", top, all)
	}
}
