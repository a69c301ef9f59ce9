/* getppid-loop M [CPU [NR]]: call getppid() M times (pinned to CPU when
 * given; a CPU below 0 is none), or system call NR when given (dtbench's
 * cost to other system calls)
 * and print the CPU time the loop took (CLOCK_THREAD_CPUTIME_ID: user +
 * system, which includes the BPF programs run by the system call's
 * tracepoint, but not the time other tasks ran on this CPU), then its wall
 * time, in nanoseconds. glibc's getppid() is a plain system call (no
 * caching). Built by dtbench with gcc -O2. */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc < 2) {
		fprintf(stderr, "usage: getppid-loop M [CPU [NR]]\n");
		return 2;
	}
	long m = atol(argv[1]);
	if (argc > 2 && atoi(argv[2]) >= 0) {
		cpu_set_t s;
		CPU_ZERO(&s);
		CPU_SET(atoi(argv[2]), &s);
		if (sched_setaffinity(0, sizeof s, &s) != 0)
			perror("sched_setaffinity");
	}
	long nr = argc > 3 ? atol(argv[3]) : -1;
	struct timespec a, b, ca, cb;
	volatile long sink = 0;
	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ca);
	if (nr < 0)
		for (long i = 0; i < m; i++)
			sink += getppid();
	else
		for (long i = 0; i < m; i++)
			sink += syscall(nr);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cb);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%lld %lld\n",
	       (long long)(cb.tv_sec - ca.tv_sec) * 1000000000LL + (cb.tv_nsec - ca.tv_nsec),
	       (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
	return 0;
}
