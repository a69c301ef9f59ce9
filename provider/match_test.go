package provider

import (
	"fmt"
	"os"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"", "anything", true},
		{"", "", true},
		{"BEGIN", "BEGIN", true},
		{"BEGIN", "BEGINx", false},
		{"BEGIN", "BEGI", false},
		{"*", "", true},
		{"*", "read", true},
		{"sys_*", "sys_read", true},
		{"sys_*", "sy_read", false},
		{"*read*", "pread64", true},
		{"*read", "readv", false},
		{"r?ad", "read", true},
		{"r?ad", "rad", false},
		{"tick-[0-9]*", "tick-1sec", true},
		{"tick-[!0-9]*", "tick-1sec", false},
		{"tick-[!0-9]*", "tick-x", true},
		{"[abc]", "b", true},
		{"[abc]", "d", false},
		{"[]]", "]", true},
		{"a\\*", "a*", true},
		{"a\\*", "ab", false},
		{"[a", "[a", true},
		{"*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbYcZ", false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestHasGlob(t *testing.T) {
	for s, want := range map[string]bool{"tick-1s": false, "sys_*": true, "a?": true, "[ab]": true, "": false} {
		if HasGlob(s) != want {
			t.Errorf("HasGlob(%q) = %v", s, !want)
		}
	}
}

// FuzzMatch checks that no pattern panics or loops, and that a pattern
// without metacharacters matches exactly itself.
func FuzzMatch(f *testing.F) {
	for _, s := range []string{"*", "a?c", "[a-z]*", "[!x]", "\\", "[", "**a**"} {
		f.Add(s, "abc")
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		got := Match(pattern, s)
		if pattern != "" && !HasGlob(pattern) && got != (pattern == s) {
			t.Fatalf("Match(%q, %q) = %v", pattern, s, got)
		}
		// A parsed description prints back in four fields that parse to it.
		if d, err := ParseDesc(pattern); err == nil {
			if d2, err := ParseDesc(d.String()); err != nil || d2 != d {
				t.Fatalf("ParseDesc(%q).String() = %q does not round-trip", pattern, d.String())
			}
		}
	})
}

func TestSplitPIDGlob(t *testing.T) {
	self := os.Getpid()
	tests := []struct {
		in      string
		pattern string
		pid     int
		ok      bool
	}{
		{fmt.Sprintf("p*d%d", self), "p*d", self, true},
		{fmt.Sprintf("py?amid%d", self), "py?amid", self, true},
		{fmt.Sprintf("pid%d", self), "", 0, false}, // no glob: the pid provider's own
		{"p*d", "", 0, false},                      // no pid
		{"p*d0", "", 0, false},
		{"p*d4194305", "", 0, false}, // beyond pid_max
		{fmt.Sprintf("%d", self), "", 0, false},
	}
	for _, tt := range tests {
		pattern, pid, ok := SplitPIDGlob(tt.in)
		if pattern != tt.pattern || pid != tt.pid || ok != tt.ok {
			t.Errorf("SplitPIDGlob(%q) = %q, %d, %v; want %q, %d, %v", tt.in, pattern, pid, ok, tt.pattern, tt.pid, tt.ok)
		}
	}
}
