package consumer

import "testing"

func TestParseSizeAndPolicy(t *testing.T) {
	sizes := map[string]int64{"64k": 65536, "4m": 4 << 20, "512": 512, "1G": 1 << 30, "50": 50}
	for s, want := range sizes {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, bad := range []string{"", "k", "-1", "12x"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) did not fail", bad)
		}
	}
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
