//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFreopen checks that freopen() sends the output that follows to a
// file, freopen("") brings it back, and the closing newline and the
// final aggregations follow the last redirection.
func TestFreopen(t *testing.T) {
	bin := buildDtrace(t)
	file := filepath.Join(t.TempDir(), "out")
	prog := fmt.Sprintf(`BEGIN { printf("a\n"); freopen("%[1]s"); printf("b\n"); freopen(""); printf("c\n"); }
BEGIN { freopen("%[1]s"); @ = count(); exit(0); }`, file)
	cmd := dtraceCmd(bin, "-wqn", prog)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dtrace: %v", err)
	}
	if string(out) != "a\nc\n" {
		t.Errorf("stdout %q, want %q", out, "a\nc\n")
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if want := "b\n\n                1\n"; string(got) != want {
		t.Errorf("file %q, want %q", got, want)
	}
}

// TestAggrate checks that printa() prints the snapshot of the
// aggregation, read at most once per aggrate: with a 10s aggrate, the
// counts printed every 10ms take no more than a few values (the first
// snapshots and the fresh one at exit), where without it they follow the
// count.
func TestAggrate(t *testing.T) {
	bin := buildDtrace(t)
	const prog = `tick-10ms { @ = count(); printa("%@d\n", @); } tick-10ms /++i == 30/ { exit(0); }`
	distinct := func(opts ...string) int {
		cmd := dtraceCmd(bin, append(opts, "-qn", prog)...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("dtrace: %v", err)
		}
		seen := map[string]bool{}
		for _, l := range strings.Fields(string(out)) {
			seen[l] = true
		}
		return len(seen)
	}
	if n := distinct("-x", "aggrate=10s"); n > 3 {
		t.Errorf("aggrate=10s: %d distinct counts printed, want at most 3", n)
	}
	if n := distinct(); n < 5 {
		t.Errorf("no aggrate: %d distinct counts printed, want them to follow the count", n)
	}
}
