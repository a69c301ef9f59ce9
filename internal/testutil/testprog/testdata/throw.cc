/*
 * throw: a C++ program for libstdc++'s own USDT probes (libstdcxx:throw,
 * libstdcxx:catch). It waits for one byte on stdin, then throws and
 * catches N exceptions.
 */
#include <cstdio>

#include "start.h"

int main(int argc, char **argv)
{
	int n = start(argc, argv);
	int caught = 0;

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
