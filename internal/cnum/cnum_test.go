package cnum

import "testing"

// TestAtol reads numbers as C's atol does.
func TestAtol(t *testing.T) {
	for s, want := range map[string]int64{"": 0, "5": 5, " 30s": 30, "\t\n-2": -2, "+7": 7, "x": 0, "12x3": 12,
		"- 3": 0, "0x10": 0, "007": 7} {
		if got := Atol(s); got != want {
			t.Errorf("Atol(%q) = %d, want %d", s, got, want)
		}
	}
}
