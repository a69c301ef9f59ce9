/*
 * raise() test: a SIGINT handler ends the bogus ioctl() loop; the program
 * then exits normally. It serves tst.raise2 (SIGINT raised at ioctl
 * return) and tst.raise3 (at ioctl entry) alike.
 */
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>

static volatile sig_atomic_t interrupted;

static void on_int(int sig) { (void)sig; interrupted = 1; }

int main(void)
{
	signal(SIGINT, on_int);
	while (!interrupted)
		ioctl(-1, -1, NULL);
	return 0;
}
