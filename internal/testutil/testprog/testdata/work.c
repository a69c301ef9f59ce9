/*
 * work: the pid provider's test program. It waits for one byte on stdin
 * (so that the tracer can attach first), then calls work(i) for i in
 * 0..N-1 and args10(0, 1, ..., 9) once, and prints the sum of what work
 * returned.
 */
#include <stdio.h>

#include "start.h"

__attribute__((noinline)) int work(int i)
{
	/* The asm keeps gcc from folding the calls away. */
	__asm__ volatile("" ::: "memory");
	return i * 3 + 1;
}

__attribute__((noinline)) long args10(long a0, long a1, long a2, long a3,
				      long a4, long a5, long a6, long a7,
				      long a8, long a9)
{
	__asm__ volatile("" ::: "memory");
	return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9;
}

int main(int argc, char **argv)
{
	int n = start(argc, argv);
	long sum = 0;

	for (int i = 0; i < n; i++)
		sum += work(i);
	args10(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
	printf("%ld\n", sum);
	return 0;
}
