//go:build linux

package codegen

import "testing"

// TestStrconv runs toupper(), tolower(), strtoll() and lltostr() with a
// base, with both instruction sets (6.1 takes the v3 code), against
// illumos's results; a base outside 2..36 is an illegal operation.
func TestStrconv(t *testing.T) {
	needBPF(t)
	src := `
BEGIN { printf("%s %d %s\n", toupper("abc"), strtoll("ff", 16), lltostr(255, 16)); }
BEGIN { printf("%s|%s\n", tolower("HeLLo, World 09[]@"), toupper("HeLLo, World 09{}` + "`" + `")); }
BEGIN { printf("%d %d %d %d %d %d %d %d\n", strtoll("12"), strtoll("  -0x1fz", 16), strtoll("+777", 8),
	strtoll("zZ", 36), strtoll("0x", 16), strtoll("9223372036854775808"), strtoll(""), strtoll("\t 12ab", 10)); }
BEGIN { printf("%s %s %s %s %s %s %s %s\n", lltostr(0, 16), lltostr(0, 8), lltostr(8, 8), lltostr(-1, 16),
	lltostr(-5, 10), lltostr(5, 2), lltostr(35, 36), lltostr(-1, 8)); }
BEGIN { b = 2; printf("%s %s %d\n", lltostr(-1, b), lltostr(-42, b + 8), strtoll("101", b)); }
BEGIN { b = 1; trace(lltostr(1, b)); }
BEGIN { b = 37; trace(strtoll("1", b)); }
BEGIN { printf("after\n"); }`
	want := "ABC 255 0xff\n" +
		"hello, world 09[]@|HELLO, WORLD 09{}`\n" +
		"12 -31 511 1295 0 -9223372036854775808 0 12\n" +
		"0x0 0 010 0xffffffffffffffff -5 101 z 01777777777777777777777\n" +
		"1111111111111111111111111111111111111111111111111111111111111111 -42 5\n" +
		"fault(clause 5, probe 1, code 3, illval 0x1)\n" +
		"fault(clause 6, probe 1, code 3, illval 0x25)\n" +
		"after\n"
	bothISAs(t, src, want)
}
