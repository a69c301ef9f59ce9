//go:build linux

package codegen

import (
	"strings"
	"testing"
)

// TestAllocaBounds checks that loads, stores and copies through pointers
// stay within the clause's alloca() memory, with DTrace's faults.
func TestAllocaBounds(t *testing.T) {
	needBPF(t)
	tests := []struct{ name, src, want string }{
		{"in-bounds", `BEGIN { s = (char *)alloca(4); t = (char *)alloca(0); n = 4; s[3] = 7; bcopy("abc", s, n); printf("%s %d %d\n", stringof(s), s[3], t - s); }`,
			"abc 0 8\n"},
		{"load-before", `BEGIN { s = (char *)alloca(15); trace(s[-1]); }`,
			"fault(clause 0, probe 1, code 1, illval ADDR\n"},
		{"load-crossing-top", `BEGIN { s = (char *)alloca(6); trace(*(int *)(s + 4)); }`,
			"fault(clause 0, probe 1, code 1, illval ADDR\n"},
		{"store-beyond", `BEGIN { s = (char *)alloca(16); s[16] = 1; }`,
			"fault(clause 0, probe 1, code 1, illval ADDR\n"},
		{"bcopy-crossing-top", `BEGIN { s = (char *)alloca(16); bcopy("01", &s[15], 2); }`,
			"fault(clause 0, probe 1, code 10, illval 0x2)\n"},
		{"bcopy-negative", `BEGIN { s = (char *)alloca(1); n = -1; bcopy("x", s, n); }`,
			"fault(clause 0, probe 1, code 10, illval 0xffffffffffffffff)\n"},
		{"bcopy-src-crossing", `BEGIN { d = alloca(20); s = alloca(10); bcopy(s, d, 20); }`,
			"fault(clause 0, probe 1, code 10, illval 0x14)\n"},
		{"other-clause", `BEGIN { s = (char *)alloca(1); *s = 1; } BEGIN { trace(*s); }`,
			"fault(clause 1, probe 1, code 1, illval ADDR\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runD(t, tt.src, Options{})
			// Where scratch is varies: an address in scratch is only
			// checked to be one.
			if j := strings.Index(tt.want, "ADDR"); j >= 0 {
				if !strings.HasPrefix(got, tt.want[:j]) || !strings.HasPrefix(got[j:], "0xff") {
					t.Errorf("got\n%s\nwant\n%s", got, tt.want)
				}
				return
			}
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
