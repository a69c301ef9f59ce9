/*
 * usdt: the USDT provider's test program, with sys/sdt.h probes. It waits
 * for one byte on stdin, then for i in 0..N-1 fires
 *   myprov:myprobe(i, -i)                 (int, int)
 *   myprov:big__probe(i * 1000000000LL, (char)i, "hello")
 *   myprov:guarded(i)                     only while its semaphore is set
 *   myprov:global(total, limit)           total = 0+1+...+i; limit = N (globals)
 * and prints how many times the guarded probe's semaphore was set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/sdt.h>

int guarded(int i);

long total;
int limit;

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	int seen = 0;
	char c;

	limit = n;
	if (read(0, &c, 1) < 0)
		return 1;
	for (int i = 0; i < n; i++) {
		long long big = i * 1000000000LL;
		char small = (char)i;
		/*
		 * On the stack, so that its page is present: a probe cannot
		 * fault in a page of .rodata the program never touched.
		 */
		char msg[] = "hello";

		DTRACE_PROBE2(myprov, myprobe, i, -i);
		DTRACE_PROBE3(myprov, big__probe, big, small, msg);
		seen += guarded(i);
		total += i;
		DTRACE_PROBE2(myprov, global, total, limit);
	}
	printf("%d\n", seen);
	return 0;
}
