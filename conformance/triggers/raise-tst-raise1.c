/*
 * raise() test: SIGINT is blocked; spin in bogus ioctl() calls until one is
 * pending, then return normally (so exit_group is called).
 */
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>

int main(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (;;) {
		ioctl(-1, -1, NULL);
		sigpending(&set);
		if (sigismember(&set, SIGINT))
			return 0;
	}
}
