package pid

import (
	"testing"

	"github.com/dtrace-go/dtrace/symbol"
)

func TestParsePID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"pid1234", 1234, true},
		{"pid", 0, false},
		{"pid0", 0, false},
		{"pid01", 0, false},
		{"pid12x", 0, false},
		{"pid*", 0, false},
		{"postgresql1234", 0, false},
	} {
		got, ok := ParsePID(tc.in, "pid")
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParsePID(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestModuleMatches(t *testing.T) {
	exe := &symbol.Module{Path: "/tmp/x/prog", Name: "prog", IsExe: true}
	libc := &symbol.Module{Path: "/lib/x86_64-linux-gnu/libc.so.6", Name: "libc.so.6"}
	for _, tc := range []struct {
		pattern string
		mod     *symbol.Module
		soname  string
		want    bool
	}{
		{"", exe, "", true},
		{"a.out", exe, "", true},
		{"a.out", libc, "libc.so.6", false},
		{"prog", exe, "", true},
		{"/tmp/x/prog", exe, "", true},
		{"a.*", exe, "", true},
		{"libc", libc, "libc.so.6", true},
		{"libc.so.6", libc, "libc.so.6", true},
		{"libc.so", libc, "libc.so.6", true},
		{"libc.s", libc, "libc.so.6", false},
		{"lib*", libc, "", true},
		{"libm", libc, "", false},
	} {
		if got := ModuleMatches(tc.pattern, tc.mod, tc.soname); got != tc.want {
			t.Errorf("ModuleMatches(%q, %s) = %v", tc.pattern, tc.mod.Name, got)
		}
	}
}
