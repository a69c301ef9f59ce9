/*
 * usdt: the USDT provider's test program, with sys/sdt.h probes. It waits
 * for one byte on stdin, then for i in 0..N-1 fires
 *   myprov:myprobe(i, -i)                 (int, int)
 *   myprov:big__probe(i * 1000000000LL, (char)i, "hello")
 *   myprov:guarded(i)                     only while its semaphore is set
 * and prints how many times the guarded probe's semaphore was set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/sdt.h>

int guarded(int i);

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	int seen = 0;
	char c;

	if (read(0, &c, 1) < 0)
		return 1;
	for (int i = 0; i < n; i++) {
		long long big = i * 1000000000LL;
		char small = (char)i;

		DTRACE_PROBE2(myprov, myprobe, i, -i);
		DTRACE_PROBE3(myprov, big__probe, big, small, "hello");
		seen += guarded(i);
	}
	printf("%d\n", seen);
	return 0;
}
