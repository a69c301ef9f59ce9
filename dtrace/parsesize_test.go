package dtrace

import "testing"

func TestParseSize(t *testing.T) {
	sizes := map[string]int64{"64k": 65536, "4m": 4 << 20, "512": 512, "1G": 1 << 30, "50": 50, "2t": 2 << 40}
	for s, want := range sizes {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, bad := range []string{"", "k", "-1", "12x", "16777216t"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) did not fail", bad)
		}
	}
}
