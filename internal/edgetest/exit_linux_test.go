//go:build linux

package edgetest

import "testing"

// TestExitFirst: the first exit() of a run sets dtrace's exit status,
// however many run after it in the same firing (illumos moves the state
// to draining with one compare-and-swap and ignores an exit() that
// finds it draining); an exit() in END sets it anew (illumos honours
// exit() in its cooldown state, which only END sees).
func TestExitFirst(t *testing.T) {
	for _, c := range []struct {
		name, prog string
		want       int
	}{
		{"BEGIN, two ifs", `BEGIN { if (1) { exit(3); } if (1) { exit(5); } }`, 3},
		{"BEGIN, one after the other", `BEGIN { exit(3); exit(5); }`, 3},
		{"tick, nested if/else", `tick-10ms { if (1) { exit(4); if (2 > 1) { exit(6); } else { exit(7); } } }`, 4},
		{"END sets it anew", `BEGIN { exit(2); } END { exit(1); }`, 1},
		{"END, last of END", `BEGIN { exit(2); } END { exit(1); exit(8); }`, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, status := dtrace(t, "-qn", c.prog)
			if status != c.want {
				t.Errorf("exit status %d, want %d; stdout %q, stderr %q", status, c.want, stdout, stderr)
			}
		})
	}
}
