/*
 * pid-provider symbol naming: go() is the strong symbol and _go a weak
 * alias of it; probes must report the name with fewer underscores, "go".
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>

int go(int a) { return a + 1; }
int _go(int a) __attribute__((weak, alias("go")));

static void on_usr1(int sig) { (void)sig; go(sig); exit(0); }

#include "usr1-main.h"
