/*
 * Trigger for pid-provider tests on code with floating-point arithmetic:
 * main loops forever multiplying and adding doubles, sleeping 1 ms per
 * round.
 */
#include <unistd.h>

volatile double c = 1.2;

int main(int argc, char **argv)
{
	double a = 1.56, b = argc;

	(void)argv;
	for (;;) {
		c *= a;
		c += b;
		usleep(1000);
	}
}
