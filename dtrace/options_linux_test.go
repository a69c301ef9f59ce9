//go:build linux

package dtrace

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runBounded runs h to the end like runOK, but interrupts it (twice, so
// that it returns whatever state it is in) when it has not ended within
// limit, and fails then.
func runBounded(t *testing.T, h *Handle, rc RunConfig, limit time.Duration) string {
	t.Helper()
	sigs := make(chan os.Signal, 2)
	rc.Interrupt = sigs
	timer := time.AfterFunc(limit, func() { sigs <- syscall.SIGINT; sigs <- syscall.SIGINT })
	var out bytes.Buffer
	status, err := h.Run(&out, rc)
	if !timer.Stop() {
		t.Fatalf("run did not end within %v; output %q", limit, out.String())
	}
	if err != nil || status != 0 {
		t.Fatalf("Run: %d, %v; output %q", status, err, out.String())
	}
	return out.String()
}

// TestStatusRate checks that statusrate paces how soon exit() is seen:
// END runs about a statusrate after exit(); without the option at once.
func TestStatusRate(t *testing.T) {
	const src = `#pragma D option quiet
BEGIN { start = timestamp; }
tick-10ms /!done && timestamp - start > 300000000/ { done = 1; at = timestamp; exit(0); }
END { printf("%d\n", (timestamp - at) / 1000000); }`
	for _, tt := range []struct {
		rate     string
		min, max int // ms between exit() and END
	}{
		{"", 0, 500},
		{"2sec", 1500, 4000},
	} {
		h := openTest(t, Config{})
		if tt.rate != "" {
			if err := h.opts.Set("statusrate", tt.rate); err != nil {
				t.Fatal(err)
			}
		}
		startTest(t, h, "statusrate", src)
		out := runBounded(t, h, RunConfig{}, 20*time.Second)
		ms, err := strconv.Atoi(strings.TrimSpace(out))
		if err != nil {
			t.Fatalf("statusrate=%q: output %q", tt.rate, out)
		}
		t.Logf("statusrate=%q: END %d ms after exit()", tt.rate, ms)
		if ms < tt.min || ms > tt.max {
			t.Errorf("statusrate=%q: END %d ms after exit(), want %d to %d", tt.rate, ms, tt.min, tt.max)
		}
		h.Close()
	}
}
