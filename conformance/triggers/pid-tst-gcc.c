/*
 * Trigger for pid-provider tests over many functions of a real program:
 * it runs /bin/ls (output to /dev/null) with posix_spawn, waits for it,
 * and starts again, forever. SIGUSR1 is caught and ignored.
 */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void go(void)
{
	char *argv[] = { "/bin/ls", NULL };
	int null = open("/dev/null", O_RDWR);
	pid_t pid;

	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	close(null);
	if (posix_spawn(&pid, "/bin/ls", NULL, NULL, argv, environ) == 0)
		waitpid(pid, NULL, 0);
}

void intr(int sig)
{
	(void)sig;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = intr };

	sigfillset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	for (;;)
		go();
}
