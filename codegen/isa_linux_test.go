//go:build linux

package codegen

import "testing"

// TestISAv3 runs what ISA v4 does in one instruction and v3 in several
// (sign extension of loads and casts, signed division of values and of
// pointer differences, the divide-by-zero fault) with both instruction
// sets: the output must be the same, and the v3 code free of v4 forms.
func TestISAv3(t *testing.T) {
	needBPF(t)
	src := `
ERROR { printf("error %d\n", arg4); }
BEGIN {
	c = (char)200; s = (short)40000; i = (int)3000000000;
	printf("%d %d %d\n", c, s, i);
	this->a = -7; this->b = 2;
	printf("%d %d %d %d\n", this->a / this->b, 7 / -2, -9223372036854775807 - 1 / 1, this->a % this->b);
	printf("%d\n", (-9223372036854775807 - 1) / -1);
	p = (int *)4096; q = (int *)4128;
	printf("%d %d\n", p - q, q - p);
	x[1] = (signed char)-3;
	printf("%d\n", x[1] * 2);
}
BEGIN { this->z = 0; printf("%d\n", -5 / this->z); }
BEGIN { printf("after\n"); }`
	// "error 0": the wrapper calls the ERROR clause once directly.
	want := "error 0\n-56 -25536 -1294967296\n-3 -3 -9223372036854775808 -1\n-9223372036854775808\n-8 8\n-6\n" +
		"fault(clause 2, probe 1, code 4, illval 0x0)\nerror 4\nafter\n"
	bothISAs(t, src, want)
}
