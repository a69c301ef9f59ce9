/*
 * throw: a C++ program for libstdc++'s own USDT probes (libstdcxx:throw,
 * libstdcxx:catch). It waits for one byte on stdin, then throws and
 * catches N exceptions.
 */
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	int caught = 0;
	char c;

	if (read(0, &c, 1) < 0)
		return 1;
	for (int i = 0; i < n; i++) {
		try {
			throw i;
		} catch (int) {
			caught++;
		}
	}
	printf("%d\n", caught);
	return 0;
}
