// Package ustacktest tests the user-stack unwinder (docs/STACKS.md) end
// to end, as root, on this machine and in the 6.1 and 6.12 guests: the
// stacks of a C program built without frame pointers under profile and
// pid probes and through a signal handler, checked against eu-stack, and
// how many samples of Debian's python3 and gzip reach libc's start.
package ustacktest
