/*
 * start.h: how the test programs begin. They wait for one byte on stdin,
 * so that the tracer can attach first, and take a count N from their first
 * argument (10 by default).
 */
#include <stdlib.h>
#include <unistd.h>

static int start(int argc, char **argv)
{
	char c;

	if (read(0, &c, 1) < 0)
		exit(1);
	return argc > 1 ? atoi(argv[1]) : 10;
}
