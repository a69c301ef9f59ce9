/*
 * Trigger for ioctl and fds[] tests. With every descriptor closed (so the
 * numbers it opens next are 0, 1, 2, ...), it calls ioctl(-1, -1, NULL)
 * every 100 microseconds until SIGUSR1. Then it opens /proc/self/mem five
 * times with different flags (the last one seeked to offset 123) and
 * calls ioctl(fd, -1, NULL) once on each, for tests to look at fds[fd].
 */
#define _GNU_SOURCE	/* O_LARGEFILE */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

static sigjmp_buf started;

static void on_usr1(int sig)
{
	siglongjmp(started, sig);
}

int main(void)
{
	static const char file[] = "/proc/self/mem";
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct rlimit rl;
	int fds[5], n = 0, i;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);

	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_max > 1024)
		rl.rlim_cur = 1024;
	setrlimit(RLIMIT_NOFILE, &rl);
	getrlimit(RLIMIT_NOFILE, &rl);
	for (i = 0; i < (int)rl.rlim_cur; i++)
		close(i);

	if (sigsetjmp(started, 1) == 0) {
		for (;;) {
			ioctl(-1, -1, NULL);
			usleep(100);
		}
	}

	fds[n++] = open(file, O_RDONLY);
	fds[n++] = open(file, O_WRONLY);
	fds[n++] = open(file, O_RDWR);
	fds[n++] = open(file, O_RDWR | O_APPEND | O_CREAT | O_DSYNC |
	    O_LARGEFILE | O_NOCTTY | O_NONBLOCK | O_NDELAY | O_RSYNC |
	    O_SYNC | O_TRUNC, 0);
	fds[n++] = open(file, O_RDWR);
	lseek(fds[n - 1], 123, SEEK_SET);

	for (i = 0; i < n; i++)
		ioctl(fds[i], -1, NULL);
	return 0;
}
