/*
 * pid-provider symbol naming: go() is a local (static) function and _go a
 * weak alias of it; probes must report the weak name, "_go", as a weak
 * or global symbol is preferred to a local one.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>

static int go(int a) { return a + 1; }
int _go(int a) __attribute__((weak, alias("go")));

static void on_usr1(int sig) { (void)sig; _go(sig); exit(0); }

#include "usr1-main.h"
