//go:build linux

package codegen

import (
	"fmt"
	"math/rand"
	"path"
	"strings"
	"testing"
)

// ntoa6Ref formats an IPv6 address by DTrace's rules, for comparison.
func ntoa6Ref(b [16]byte, strict bool) string {
	var w [8]int
	for i := range w {
		w[i] = int(b[2*i])<<8 | int(b[2*i+1])
	}
	quad := fmt.Sprintf("%d.%d.%d.%d", b[12], b[13], b[14], b[15])
	if w[0]|w[1]|w[2]|w[3]|w[4] == 0 {
		switch {
		case w[5] == 0xffff && strict:
			return "::ffff:" + quad
		case w[5] == 0xffff:
			return quad
		case w[5] == 0 && (w[6] != 0 || w[7] > 1) && strict:
			return "::" + quad
		case w[5] == 0 && (w[6] != 0 || w[7] > 1):
			return quad
		}
	}
	bs, bl := 0, 0
	for i := 0; i < 8; i++ {
		n := 0
		for i+n < 8 && w[i+n] == 0 {
			n++
		}
		if n > bl {
			bs, bl = i, n
		}
	}
	if bl < 2 {
		bl = 0
	}
	var s strings.Builder
	for i := 0; i < 8; i++ {
		switch {
		case bl > 0 && i == bs:
			s.WriteString("::")
		case bl > 0 && i > bs && i < bs+bl:
		default:
			if i > 0 && !(bl > 0 && i == bs+bl) {
				s.WriteString(":")
			}
			fmt.Fprintf(&s, "%x", w[i])
		}
	}
	return s.String()
}

// cleanpathRef is DTrace's cleanpath(): path.Clean, except that the empty
// path stays empty.
func cleanpathRef(p string) string {
	if p == "" {
		return ""
	}
	return path.Clean(p)
}

// storeBytes returns D statements filling this->a with b.
func storeBytes(b []byte) string {
	var s strings.Builder
	for i, v := range b {
		fmt.Fprintf(&s, "this->a[%d] = %d; ", i, v)
	}
	return s.String()
}

// TestInetNtoa6 compares inet_ntoa6() and inet_ntop() with the reference
// on addresses rich in zero words.
func TestInetNtoa6(t *testing.T) {
	needBPF(t)
	rnd := rand.New(rand.NewSource(2))
	var addrs [][16]byte
	for _, fixed := range []string{"", "0000000000000000000000000000000001", "00000000000000000000ffff7f000001",
		"00000000000000000000fffe7f000001", "0000000000000000000000007f000001", "00000000000000000000000000000002"} {
		var a [16]byte
		fmt.Sscanf(fixed, "%x", &a)
		addrs = append(addrs, a)
	}
	for len(addrs) < 40 {
		var a [16]byte
		for i := 0; i < 8; i++ {
			switch rnd.Intn(3) {
			case 0:
				a[2*i+1] = byte(rnd.Intn(256))
			case 1:
				a[2*i], a[2*i+1] = byte(rnd.Intn(256)), byte(rnd.Intn(256))
			}
		}
		addrs = append(addrs, a)
	}
	for start := 0; start < len(addrs); start += 8 {
		var src, want strings.Builder
		src.WriteString("BEGIN { this->a = (uint8_t *)alloca(16); ")
		for _, a := range addrs[start:min(start+8, len(addrs))] {
			src.WriteString(storeBytes(a[:]))
			src.WriteString(`printf("%s %s\n", inet_ntoa6((struct in6_addr *)this->a), inet_ntop(10, this->a)); `)
			fmt.Fprintf(&want, "%s %s\n", ntoa6Ref(a, false), ntoa6Ref(a, true))
		}
		src.WriteString("}")
		spec := compileD(t, src.String(), Options{})
		r := loadSpec(t, spec)
		if got := render(t, spec, r.fire(t)); got != want.String() {
			t.Errorf("got\n%s\nwant\n%s", got, want.String())
		}
		r.close()
	}
}

// TestStringSubrRuns runs programs of the network and string
// subroutines and compares what they print.
func TestStringSubrRuns(t *testing.T) {
	needBPF(t)
	for _, tt := range []struct{ name, src, want string }{
		{"InetNtoaLinkNtop", `BEGIN { this->a = (uint8_t *)alloca(20); ` + storeBytes([]byte{192, 168, 0, 10, 0xa, 0xb, 0, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0xcd}) + `
printf("%s|%s|%s|%s\n", inet_ntoa((uint32_t *)this->a), inet_ntop(2, this->a), link_ntop(1, this->a), link_ntop(32, this->a)); }
BEGIN { t = 7; printf("%s\n", link_ntop(t, alloca(8))); }
BEGIN { printf("%s\n", inet_ntoa((uint32_t *)0)); }
BEGIN { t = 99; printf("%s\n", inet_ntop(t, (void *)0)); }`,
			"192.168.0.10|192.168.0.10|c0:a8:00:0a:0a:0b|c0:a8:00:0a:0a:0b:00:ff:01:02:03:04:05:06:07:08:09:0a:0b:cd\n" +
				"fault(clause 1, probe 1, code 3, illval 0x7)\n" +
				"fault(clause 2, probe 1, code 1, illval 0x0)\n" +
				"fault(clause 3, probe 1, code 3, illval 0x63)\n"},
		// String subroutines given NULL fault with "invalid address"
		// (0), and strtok(NULL, ...) needs a string taken apart before.
		{"NullStringArgs", `BEGIN { trace(substr(0, 1)); } BEGIN { trace(strjoin("a", 0)); } BEGIN { trace(index("abc", 0)); }
BEGIN { trace(strtok(NULL, "x")); } BEGIN { trace(strtok("abc", 0)); } BEGIN { trace(cleanpath(0)); }
BEGIN { printf("%s\n", strtok("a b", " ")); }`,
			"fault(clause 0, probe 1, code 1, illval 0x0)\nfault(clause 1, probe 1, code 1, illval 0x0)\n" +
				"fault(clause 2, probe 1, code 1, illval 0x0)\nfault(clause 3, probe 1, code 1, illval 0x0)\n" +
				"fault(clause 4, probe 1, code 1, illval 0x0)\nfault(clause 5, probe 1, code 1, illval 0x0)\na\n"},
		{"RindexNegativeStart", `BEGIN { printf("%d %d %d %d %d\n", rindex("foofoo", "foo", -1), rindex("foofoo", "", -1), rindex("foofoo", "foo", 2), index("foofoo", "foo", -5), rindex("", "", -400)); }`, "-1 0 0 0 0\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := runD(t, tt.src, Options{}); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestCleanpath compares cleanpath() with the reference on random paths.
func TestCleanpath(t *testing.T) {
	needBPF(t)
	rnd := rand.New(rand.NewSource(3))
	parts := []string{"/", "/", "//", ".", "..", "a", "bc", "./", "../", "..."}
	paths := []string{"", ".", "/", "..", "/..", "a/..", "../../a/b/../..", "/a/b/../../../c/"}
	for len(paths) < 48 {
		var p strings.Builder
		for n := rnd.Intn(9); n >= 0; n-- {
			p.WriteString(parts[rnd.Intn(len(parts))])
		}
		paths = append(paths, p.String())
	}
	for start := 0; start < len(paths); start += 16 {
		var src, want strings.Builder
		src.WriteString("BEGIN { ")
		for _, p := range paths[start:min(start+16, len(paths))] {
			fmt.Fprintf(&src, `printf("%%s\n", cleanpath("%s")); `, p)
			want.WriteString(cleanpathRef(p) + "\n")
		}
		src.WriteString("}")
		spec := compileD(t, src.String(), Options{StrSize: 64})
		r := loadSpec(t, spec)
		if got := render(t, spec, r.fire(t)); got != want.String() {
			t.Errorf("paths %q:\ngot\n%s\nwant\n%s", paths[start:min(start+16, len(paths))], got, want.String())
		}
		r.close()
	}
}
