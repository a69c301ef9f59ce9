/*
 * pid-provider and vfork: spin in bogus ioctl() calls until SIGUSR1, then
 * vfork; only the child calls go(), then exits. The child shares the
 * parent's memory (and so its uprobes) until it exits, but it is not the
 * traced process: the test checks that no firing is credited to the
 * parent, which never calls go().
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

int go(int a)
{
	int total = 0;

	for (int i = 0; i < 10; i++)
		total += i * a;
	return total;
}

static volatile sig_atomic_t hit;

static void on_usr1(int sig)
{
	(void)sig;
	hit = 1;
}

int main(void)
{
	pid_t child;

	signal(SIGUSR1, on_usr1);
	while (!hit) {
		ioctl(-1, -1, NULL);
		usleep(100);
	}
	child = vfork();
	if (child == 0)
		_exit(go(1));
	waitpid(child, NULL, 0);
	return 0;
}
