/*
 * Trigger for syscall argument tests: it calls
 * mmap(NULL, 1, 2, 3, -1, 0x12345678) forever, straight through
 * syscall(2) so that the C library does not check or change anything.
 */
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	for (;;)
		syscall(SYS_mmap, NULL, 1, 2, 3, -1, 0x12345678UL);
}
