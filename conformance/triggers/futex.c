/*
 * Trigger for futex tests: a parent and a child process hand a turn back
 * and forth argv[1] times (default 5) through two futexes in shared
 * memory, each printing a line on its turn.
 */
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long futex(int *addr, int op, int val)
{
	return syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

/* take waits until *f is 1 and makes it 0. */
static void take(int *f)
{
	while (!__sync_bool_compare_and_swap(f, 1, 0))
		futex(f, FUTEX_WAIT, 0);
}

/* give makes *f 1 and wakes a waiter. */
static void give(int *f)
{
	if (__sync_bool_compare_and_swap(f, 0, 1))
		futex(f, FUTEX_WAKE, 1);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5, i;
	int *f = mmap(NULL, 2 * sizeof(int), PROT_READ | PROT_WRITE,
	    MAP_ANONYMOUS | MAP_SHARED, -1, 0);
	int *child, *parent;
	pid_t pid;

	if (f == MAP_FAILED)
		return 1;
	setbuf(stdout, NULL);
	child = &f[0], parent = &f[1];
	*child = 0, *parent = 1;
	pid = fork();
	if (pid < 0)
		return 1;
	for (i = 0; i < n; i++) {
		take(pid == 0 ? child : parent);
		printf("%s (%ld) %d\n", pid == 0 ? "Child " : "Parent",
		    (long)getpid(), i);
		give(pid == 0 ? parent : child);
	}
	if (pid != 0)
		wait(NULL);
	return 0;
}
