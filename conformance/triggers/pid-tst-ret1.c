/*
 * pid-provider return test: spin in bogus ioctl() calls until SIGUSR1,
 * then call go(), which returns 101 through a helper, and exit.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>

int a = 100;

int help(void) { return a; }
int go(void) { return help() + 1; }

static void on_usr1(int sig) { (void)sig; go(); exit(0); }

#include "usr1-main.h"
