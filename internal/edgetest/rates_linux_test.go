//go:build linux

package edgetest

import "testing"

// TestRateOptions: the rate options take a time or a frequency as
// illumos's dt_opt_rate does (a bare number is nanoseconds), and values
// outside illumos's bounds are clamped as its kernel clamps them
// (cleanrate to 200us..1min, statusrate to at most 10s), not refused.
func TestRateOptions(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"cleanrate=3000", []string{"-x", "cleanrate=3000"}},
		{"cleanrate=2000hz", []string{"-x", "cleanrate=2000hz"}},
		{"cleanrate=50ms", []string{"-x", "cleanrate=50ms"}},
		{"cleanrate=2min", []string{"-x", "cleanrate=2min"}},
		{"statusrate=1min", []string{"-x", "statusrate=1min"}},
		{"others", []string{"-x", "switchrate=2000hz", "-x", "aggrate=50ms", "-x", "statusrate=3000"}},
		{"pragma", []string{"-n", "#pragma D option cleanrate=6000hz\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(c.args, "-qn", `BEGIN { @ = count(); exit(0); }`)
			stdout, stderr, status := dtrace(t, args...)
			if status != 0 || stdout != "\n                1\n" || stderr != "" {
				t.Errorf("status %d, stdout %q, stderr %q; want 0, the count and nothing", status, stdout, stderr)
			}
		})
	}
}
