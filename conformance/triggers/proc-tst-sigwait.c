/*
 * Trigger for signal-delivery tests: a timer sends SIGUSR1 after 5
 * seconds and then every half second; the signal is blocked and taken
 * with sigwait(), forever.
 */
#include <signal.h>
#include <stdio.h>
#include <time.h>

int main(void)
{
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1 };
	struct itimerspec ts = { .it_value = { 5, 0 }, .it_interval = { 0, 500000000 } };
	sigset_t set;
	timer_t timer;
	int sig;

	if (timer_create(CLOCK_REALTIME, &ev, &timer) == -1) {
		perror("timer_create");
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (timer_settime(timer, 0, &ts, NULL) == -1) {
		perror("timer_settime");
		return 1;
	}
	for (;;)
		sigwait(&set, &sig);
}
