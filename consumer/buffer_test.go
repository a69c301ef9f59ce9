package consumer

import "testing"

func TestParsePolicy(t *testing.T) {
	for _, p := range []Policy{PolicySwitch, PolicyFill, PolicyRing} {
		if got, err := ParsePolicy(p.String()); err != nil || got != p {
			t.Errorf("ParsePolicy(%q) = %v, %v", p, got, err)
		}
	}
	if _, err := ParsePolicy("wrap"); err == nil {
		t.Error("ParsePolicy(wrap) did not fail")
	}
	for _, tt := range []struct{ size, pages int }{{1, 1}, {4096, 1}, {4097, 2}, {65536, 16}, {3 * 4096, 4}} {
		if got := pagesFor(tt.size, 4096); got != tt.pages {
			t.Errorf("pagesFor(%d) = %d, want %d", tt.size, got, tt.pages)
		}
	}
}
