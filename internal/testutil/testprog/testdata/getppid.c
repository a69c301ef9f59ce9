/*
 * getppid: calls getppid(2) N times once it is released (start.h), and
 * nothing else, so that a system call count and a count of libc's
 * getppid are exact.
 */
#include "start.h"

int main(int argc, char **argv)
{
	int n = start(argc, argv);

	for (int i = 0; i < n; i++)
		getppid();
	return 0;
}
