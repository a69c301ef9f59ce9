//go:build linux

package edgetest

import (
	"regexp"
	"testing"
)

// TestRingSmallBuffer: under the ring policy a buffer smaller than a
// clause's records does not stop the run (illumos only refuses buffers
// below 8 bytes): what does not fit is dropped and counted, the run
// exits 0, or with exit()'s status though its record was dropped. The
// switch policy still refuses such a buffer when enabling, as
// dtrace-utils does (the corpus's options/err.b-too-low).
func TestRingSmallBuffer(t *testing.T) {
	drop := regexp.MustCompile(`^dtrace: 1 drop on CPU [0-9]+\n$`)
	for _, c := range []struct {
		name, prog string
		status     int
	}{
		{"exit 0", `BEGIN { printf("%d %d %d\n", 1, 2, 3); exit(0); }`, 0},
		{"exit 3", `BEGIN { printf("%d %d %d\n", 1, 2, 3); exit(3); }`, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, status := dtrace(t, "-b", "16", "-x", "bufpolicy=ring", "-qn", c.prog)
			if status != c.status || stdout != "\n" || !drop.MatchString(stderr) {
				t.Errorf("status %d, stdout %q, stderr %q; want %d, an empty line and one drop", status, stdout, stderr, c.status)
			}
		})
	}
	t.Run("switch", func(t *testing.T) {
		_, stderr, status := dtrace(t, "-b", "16", "-qn", `BEGIN { printf("%d %d %d\n", 1, 2, 3); exit(0); }`)
		if want := "dtrace: could not enable tracing: Enabling exceeds size of buffer\n"; status != 1 || stderr != want {
			t.Errorf("status %d, stderr %q; want 1 and %q", status, stderr, want)
		}
	})
}
