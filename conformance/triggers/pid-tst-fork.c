/*
 * pid-provider and fork: spin in bogus ioctl() calls until SIGUSR1, then
 * fork; parent and child both call go(), but only the parent is traced.
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
	child = fork();
	go(child == 0);
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	exit(0);
}

#include "usr1-main.h"
