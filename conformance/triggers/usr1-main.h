/*
 * The main of the pid-provider triggers that wait in a bogus ioctl until
 * the test's SIGUSR1 makes them call on_usr1, which the trigger defines
 * before it includes this file last (so that its own functions keep
 * their place in the text).
 */
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>

int main(void)
{
	signal(SIGUSR1, on_usr1);
	for (;;)
		ioctl(-1, -1, NULL);
}
