/* Trigger for open(2) tests: opens /dev/null once and exits 0. */
#include <fcntl.h>

int main(void)
{
	return open("/dev/null", O_RDONLY) < 0;
}
