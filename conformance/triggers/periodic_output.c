/*
 * Trigger for tests that count write(2) calls: it writes one numbered line
 * to /dev/null every second, forever.
 */
#include <stdio.h>
#include <time.h>

int main(void)
{
	struct timespec second = { 1, 0 };
	FILE *f = fopen("/dev/null", "a");
	int i;

	if (f == NULL)
		return 1;
	for (i = 0;; i++) {
		fprintf(f, "periodic output %04d\n", i);
		fflush(f);
		nanosleep(&second, NULL);
	}
}
