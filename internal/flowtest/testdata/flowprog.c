/*
 * flowprog: the processes of the flow variable tests (internal/flowtest).
 *
 *   flowprog fork             getppid(); fork; the parent calls getpgid(0)
 *                             after the fork; the child, 300 ms later,
 *                             calls getsid(0)
 *   flowprog produce N        writes N lines "k\n" (k = 1..N) to stdout,
 *                             one write each
 *   flowprog relay            reads stdin byte by byte and writes each
 *                             line on with one write
 *   flowprog pool N W         N requests of 16 bytes ('R', then the
 *                             request number k as an int64 at byte 8) over
 *                             one pipe to W forked workers, which answer
 *                             each over another pipe with one write of 16
 *                             bytes ('A', k at byte 8); the parent reads
 *                             the answers and prints their number
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void writeall(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			exit(1);
		p += w;
		n -= w;
	}
}

static int readfull(int fd, char *p, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, p + got, n - got);
		if (r <= 0)
			return 0;
		got += r;
	}
	return 1;
}

static int forktest(void)
{
	getppid();
	pid_t pid = fork();
	if (pid == 0) {
		/* Let the parent set its variable after the fork first (a
		 * pipe would carry the parent's flow to the child). */
		usleep(300000);
		getsid(0);
		_exit(0);
	}
	getpgid(0);
	waitpid(pid, NULL, 0);
	return 0;
}

static int produce(int n)
{
	char buf[32];
	for (int k = 1; k <= n; k++) {
		int len = snprintf(buf, sizeof buf, "%d\n", k);
		writeall(1, buf, len);
	}
	return 0;
}

static int relay(void)
{
	char line[256];
	size_t n = 0;
	char c;
	while (read(0, &c, 1) == 1) {
		if (n < sizeof line)
			line[n++] = c;
		if (c == '\n') {
			writeall(1, line, n);
			n = 0;
		}
	}
	if (n > 0)
		writeall(1, line, n);
	return 0;
}

static int pool(int n, int workers)
{
	int req[2], ans[2];
	char buf[16];
	if (pipe(req) < 0 || pipe(ans) < 0)
		return 1;
	for (int w = 0; w < workers; w++) {
		if (fork() == 0) {
			close(req[1]);
			close(ans[0]);
			/* One read takes one request: writes of 16 bytes are
			 * atomic and the reads ask for 16. */
			while (read(req[0], buf, sizeof buf) == sizeof buf) {
				buf[0] = 'A';
				usleep(w);	/* let the workers' answers interleave */
				writeall(ans[1], buf, sizeof buf);
			}
			_exit(0);
		}
	}
	close(req[0]);
	close(ans[1]);
	if (fork() == 0) {
		/* The dispatcher. */
		close(ans[0]);
		for (int64_t k = 1; k <= n; k++) {
			memset(buf, 0, sizeof buf);
			buf[0] = 'R';
			memcpy(buf + 8, &k, sizeof k);
			writeall(req[1], buf, sizeof buf);
		}
		_exit(0);
	}
	close(req[1]);
	int got = 0;
	while (readfull(ans[0], buf, sizeof buf))
		got++;
	while (wait(NULL) > 0)
		;
	printf("%d\n", got);
	return got == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "fork") == 0)
		return forktest();
	if (argc >= 3 && strcmp(argv[1], "produce") == 0)
		return produce(atoi(argv[2]));
	if (argc >= 2 && strcmp(argv[1], "relay") == 0)
		return relay();
	if (argc >= 4 && strcmp(argv[1], "pool") == 0)
		return pool(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: flowprog fork | produce N | relay | pool N W\n");
	return 2;
}
