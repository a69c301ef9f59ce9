/*
 * calls: calls getppid(2) and a function of its own, work, N times each
 * (N its first argument, 0 by default), so that a syscall count and a pid
 * probe count are exact.
 */
#include <stdlib.h>
#include <unistd.h>

volatile long sink;

__attribute__((noinline)) void work(long i) { sink += i; }

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 0;
	for (long i = 0; i < n; i++) {
		sink += getppid();
		work(i);
	}
	return 0;
}
