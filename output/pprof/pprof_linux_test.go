//go:build linux

package pprof

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/dtrace-go/dtrace/internal/testutil/outtest"
)

// TestGoToolPprof profiles @[ustack()] = count() at work's entry over 100
// calls: go tool pprof -top lists work with its 100, and the profile has
// work's file and line from the target's DWARF. An unwritable file is
// refused.
func TestGoToolPprof(t *testing.T) {
	file := filepath.Join(t.TempDir(), "work.pb.gz")
	outtest.Renders(t, "pprof", "/nonexistent/p.pb.gz", file)
	out, err := exec.Command("go", "tool", "pprof", "-top", file).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, out)
	}
	var work bool
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) >= 6 && f[0] == "100" && f[5] == "work" {
			work = true
		}
	}
	if !work {
		t.Errorf("go tool pprof -top does not list work with 100:\n%s", out)
	}
	p := outtest.Parse(t, file, profile.Parse)
	var line bool
	for _, l := range p.Location {
		for _, ln := range l.Line {
			if ln.Function.Name == "work" && strings.HasSuffix(ln.Function.Filename, "calls.c") && ln.Line == 11 {
				line = true
			}
		}
	}
	if !line {
		t.Errorf("work has no line calls.c:11:\n%s", p)
	}
}
