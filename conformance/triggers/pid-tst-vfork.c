/*
 * pid-provider and vfork: spin in bogus ioctl() calls until SIGUSR1, then
 * vfork; the child calls go() and exits, then the parent calls go().
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

int go(int a) { return a * 2; }

static void on_usr1(int sig)
{
	pid_t child;

	(void)sig;
	child = vfork();
	if (child == 0) {
		go(1);
		_exit(0);
	}
	waitpid(child, NULL, 0);
	go(0);
	exit(0);
}

int main(void)
{
	signal(SIGUSR1, on_usr1);
	for (;;)
		ioctl(-1, -1, NULL);
}
