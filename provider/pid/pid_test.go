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

func TestMisemulated(t *testing.T) {
	for _, c := range []struct {
		code []byte
		want bool
	}{
		{[]byte{0x62, 0xe2, 0x7d, 0x28, 0x7a, 0xc6}, true}, // vpbroadcastb %esi,%ymm16: jp
		{[]byte{0xc5, 0xfd, 0x74, 0xda}, true},             // vpcmpeqb: je
		{[]byte{0xc5, 0xf8, 0x77}, true},                   // vzeroupper: ja
		{[]byte{0xc5, 0xf8, 0x54, 0xc1}, true},             // vandps: push
		{[]byte{0xc5, 0xed, 0xeb, 0xdb}, true},             // vpor: jmp
		{[]byte{0xc4, 0xe2, 0x7d, 0x78, 0xc0}, true},       // vpbroadcastb %xmm0,%ymm0: js
		{[]byte{0xc4, 0xe2, 0x7d, 0x58, 0xc0}, false},      // vpbroadcastd %xmm0,%ymm0
		{[]byte{0xc5, 0xfe, 0x6f, 0x17}, false},            // vmovdqu
		{[]byte{0x74, 0x05}, false},                        // je: emulated rightly
		{[]byte{0x55}, false},                              // push %rbp
		{[]byte{0x66, 0x90}, false},                        // xchg %ax,%ax
	} {
		if got := Misemulated(c.code); got != c.want {
			t.Errorf("Misemulated(% x) = %v, want %v", c.code, got, c.want)
		}
	}
}

func TestIndirectOnly(t *testing.T) {
	for _, c := range []struct {
		name string
		code []byte
		want bool
	}{
		{"jmp *%r11", []byte{0x4c, 0x89, 0xd8, 0x41, 0xff, 0xe3}, true}, // mov %r11,%rax; jmp *%r11
		{"jmp *(%rax)", []byte{0x90, 0xff, 0x20}, true},
		{"ret", []byte{0x90, 0xc3}, false},
		{"jump table and ret", []byte{0x74, 0x02, 0xff, 0xe0, 0xc3}, false}, // je; jmp *%rax; ret
		{"loop", []byte{0x90, 0xeb, 0xfd}, false},                           // no exit at all
		{"call *%rax", []byte{0xff, 0xd0, 0xeb, 0xfc}, false},
	} {
		if got := IndirectOnly(c.code); got != c.want {
			t.Errorf("%s: IndirectOnly(% x) = %v, want %v", c.name, c.code, got, c.want)
		}
	}
}
