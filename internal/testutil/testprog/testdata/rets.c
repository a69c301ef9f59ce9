/*
 * rets: the test program of pid return probes. Its functions leave in
 * every way a return probe must see: threeways() by ret, rep ret and
 * ret $imm16 (chosen by i % 3), tailer() by a tail call (a jmp to
 * plus3), condtail(), condlt() and condabove() by conditional tail calls
 * to plus3 (jne rel8, jl rel32, ja rel32) and a ret otherwise. It waits for one byte on stdin (so that the tracer can attach
 * first), then calls both for i in 0..N-1 and prints the sum of what
 * they returned.
 */
#include <stdio.h>

#include "start.h"

int threeways(int i);
int tailer(int i);
int condtail(int i);
int condlt(int i);
int condabove(int i);

__asm__(
	".text\n"
	".globl threeways\n"
	".type threeways, @function\n"
	"threeways:\n"
	"	mov %edi, %eax\n"
	"	mov $3, %ecx\n"
	"	cltd\n"
	"	idiv %ecx\n"
	"	cmp $1, %edx\n"
	"	je 1f\n"
	"	cmp $2, %edx\n"
	"	je 2f\n"
	"	mov %edi, %eax\n"		/* i % 3 == 0: i */
	"	ret\n"
	"1:	lea (%rdi,%rdi), %eax\n"	/* i % 3 == 1: 2i */
	"	rep ret\n"
	"2:	lea 100(%rdi), %eax\n"		/* i % 3 == 2: i + 100 */
	"	ret $0\n"
	".size threeways, .-threeways\n"
	".globl tailer\n"
	".type tailer, @function\n"
	"tailer:\n"
	"	add $1, %edi\n"
	"	jmp plus3\n"			/* tailer(i) = i + 4 */
	".size tailer, .-tailer\n"
	".globl condtail\n"
	".type condtail, @function\n"
	"condtail:\n"
	"	test $1, %edi\n"
	"	jne plus3\n"			/* odd i: i + 3 */
	"	lea 5(%rdi), %eax\n"		/* even i: i + 5 */
	"	ret\n"
	".size condtail, .-condtail\n"
	".globl condlt\n"
	".type condlt, @function\n"
	"condlt:\n"
	"	cmp $100, %edi\n"
	"	{disp32} jl plus3\n"		/* i < 100: i + 3 */
	"	lea 5(%rdi), %eax\n"		/* else i + 5 */
	"	ret\n"
	".size condlt, .-condlt\n"
	".globl condabove\n"
	".type condabove, @function\n"
	"condabove:\n"
	"	cmp $200, %edi\n"
	"	{disp32} ja plus3\n"		/* i > 200: i + 3 */
	"	lea 5(%rdi), %eax\n"		/* else i + 5 */
	"	ret\n"
	".size condabove, .-condabove\n");

__attribute__((noinline)) int plus3(int i)
{
	__asm__ volatile("" ::: "memory");
	return i + 3;
}

int main(int argc, char **argv)
{
	int n = start(argc, argv);
	long sum = 0;

	for (int i = 0; i < n; i++)
		sum += threeways(i) + tailer(i) + condtail(i) + condlt(i) +
			condabove(i);
	printf("%ld\n", sum);
	return 0;
}
