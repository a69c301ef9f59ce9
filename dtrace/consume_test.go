//go:build linux

package dtrace

import (
	"testing"
	"time"
)

// setopt() of a rate takes effect through the settings the consumer
// gets back; rates not set stay 0 (no limit), as dtrace's defaults.
func TestSetoptSettings(t *testing.T) {
	h := &Handle{opts: NewOptions()}
	if s := h.settings(); s.SwitchRate != 0 || s.AggRate != 0 {
		t.Fatalf("rates unset: %v %v, want 0", s.SwitchRate, s.AggRate)
	}
	s, err := h.setopt("switchrate", "100ms", true)
	if err != nil || s.SwitchRate != 100*time.Millisecond || s.AggRate != 0 {
		t.Fatalf("setopt(switchrate): %+v, %v", s, err)
	}
	if s, err = h.setopt("quiet", "", false); err != nil || !s.Quiet {
		t.Fatalf("setopt(quiet): %+v, %v", s, err)
	}
	if _, err := h.setopt("nosuchoption", "1", true); err == nil {
		t.Error("setopt of an unknown option succeeded")
	}
}
