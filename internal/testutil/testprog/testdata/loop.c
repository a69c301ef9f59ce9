/*
 * loop: calls a few libc functions and system calls until killed.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[64];

	for (;;) {
		getppid();
		snprintf(buf, sizeof buf, "%d", (int)strlen(argv[0]));
		usleep(1000);
	}
}
