/*
 * longsleep: a process to look at, which sleeps (nearly) forever. It is a
 * C program, linked with libc, so that pid-provider tests find libc's
 * functions (_exit, ...) in it; the Go trigger of the name is used only
 * where no C compiler is found.
 */
#include <unistd.h>

int main(void)
{
	sleep(10000);
	return 0;
}
