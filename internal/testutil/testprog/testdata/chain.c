/*
 * chain: main -> a -> b -> c -> d, each noinline, for the user-stack
 * tests (internal/ustacktest). Built with -O2 -fomit-frame-pointer, as
 * distributions build C: only call-frame information unwinds it.
 *
 * chain N: call a(N) forever; d loops N times. chain N sig: also take
 * SIGALRM after a second into handler -> handler_work while d runs.
 */
#include <signal.h>
#include <stdlib.h>
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

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	if (argc > 2) {
		signal(SIGALRM, handler);
		alarm(1);
	}
	for (;;)
		a(n);
}
