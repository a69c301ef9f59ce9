/*
 * pid-provider return test: like pid-tst-ret1, but go() returns its
 * helper's value (100) directly.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>

int a = 100;

int help(void) { return a; }
int go(void) { return help(); }

static void on_usr1(int sig) { (void)sig; go(); exit(0); }

#include "usr1-main.h"
