/*
 * pid-provider symbol naming: _go() is the strong symbol and go a weak
 * alias of it; probes must report the strong name, "_go".
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>

int _go(int a) { return a + 1; }
int go(int a) __attribute__((weak, alias("_go")));

static void on_usr1(int sig) { (void)sig; _go(sig); exit(0); }

int main(void)
{
	signal(SIGUSR1, on_usr1);
	for (;;)
		ioctl(-1, -1, NULL);
}
