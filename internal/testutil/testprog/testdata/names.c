/* names: main calls a, a calls b, b calls c, c calls d, and d loops for
 * the seconds its argument gives (1 by default). Every call is kept
 * (noipa: no inlining, cloning or tail call), so that a stack sampled in d
 * has d, c, b, a and main, each a function the symbol tables name; built
 * -O2 -fomit-frame-pointer, as distributions build C. */
#include <stdlib.h>
#include <time.h>

#define KEEP __attribute__((noipa))

volatile unsigned long sink;
static struct timespec t0;
static double seconds = 1;

static int over(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 > seconds;
}

KEEP int d(int n)
{
	for (;;) {
		for (int i = 0; i < 1000000; i++)
			sink += (unsigned long)i * n;
		if (over())
			return (int)sink;
	}
}

KEEP int c(int n) { return d(n + 1) + 1; }
KEEP int b(int n) { return c(n + 1) + 1; }
KEEP int a(int n) { return b(n + 1) + 1; }

int main(int argc, char **argv)
{
	if (argc > 1)
		seconds = atof(argv[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	return a(argc) & 1;
}
