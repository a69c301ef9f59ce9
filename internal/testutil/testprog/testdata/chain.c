/*
 * chain: main -> a -> b -> c -> d, each noinline, for the user-stack
 * tests (internal/ustacktest). Built with -O2 -fomit-frame-pointer, as
 * distributions build C: only call-frame information unwinds it.
 *
 * chain N: call a(N) forever; d loops N times. chain N sig: also take
 * SIGALRM after a second into handler -> handler_work while d runs.
 * chain N reg: call spin(N), then a(N), forever; chain N regsig: call
 * spin(N) forever and take SIGALRM after a second while it runs. spin
 * realigns the stack and keeps its CFA in r12 meanwhile, a register the
 * unwinder knows only in the innermost frame (the kernel's saved
 * registers) and in the frame a signal interrupted (the signal frame's).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile unsigned long sink;

__attribute__((noinline)) void handler_work(void)
{
	for (unsigned long i = 0; i < 100000000UL; i++)
		sink += i;
}

__attribute__((noinline)) void handler(int sig)
{
	handler_work();
	sink += sig; /* not a tail call: handler keeps its frame */
}

__attribute__((noinline)) void d(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) void c(long n) { d(n); sink++; }
__attribute__((noinline)) void b(long n) { c(n); sink++; }
__attribute__((noinline)) void a(long n) { b(n); sink++; }

/*
 * spin(n): n turns of a loop (at spin+0x12) with
 * the stack aligned to 64 bytes and the CFA in r12, as hand-written code
 * that realigns its stack may describe its frame.
 */
void spin(long n);
__asm__(".text\n"
	".globl spin\n"
	".type spin, @function\n"
	"spin:\n"
	".cfi_startproc\n"
	"	push %r12\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset r12, -16\n"
	"	mov %rsp, %r12\n"
	".cfi_def_cfa_register r12\n"
	"	and $-64, %rsp\n"
	"	sub $64, %rsp\n"
	"	test %rdi, %rdi\n"
	"	jle 2f\n"
	"1:\n"
	"	addq $1, sink(%rip)\n"
	"	sub $1, %rdi\n"
	"	jnz 1b\n"
	"2:\n"
	"	mov %r12, %rsp\n"
	".cfi_def_cfa_register rsp\n"
	"	pop %r12\n"
	".cfi_def_cfa_offset 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size spin, .-spin\n");

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	const char *mode = argc > 2 ? argv[2] : "";
	if (strcmp(mode, "sig") == 0 || strcmp(mode, "regsig") == 0) {
		signal(SIGALRM, handler);
		alarm(1);
	}
	for (;;) {
		if (strncmp(mode, "reg", 3) == 0)
			spin(n);
		if (strcmp(mode, "regsig") != 0)
			a(n);
		sink++; /* not a tail call: main keeps its frame */
	}
}
