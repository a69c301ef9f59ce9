/*
 * Trigger for pid-provider argument tests: it spins calling a failing
 * ioctl(2) (which the test watches for) until SIGUSR1, then calls go()
 * once with the arguments 0 to 9 (go returns its second argument) and
 * exits.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

int go(int a0, int a1, int a2, int a3, int a4, int a5, int a6, int a7,
       int a8, int a9)
{
	(void)a0; (void)a2; (void)a3; (void)a4; (void)a5;
	(void)a6; (void)a7; (void)a8; (void)a9;
	return a1;
}

static void on_usr1(int sig)
{
	(void)sig;
	go(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
	exit(0);
}

int main(void)
{
	signal(SIGUSR1, on_usr1);
	for (;;) {
		ioctl(-1, -1, NULL);
		usleep(100);
	}
}
