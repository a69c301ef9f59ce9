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
 *   flowprog sock KIND N      a child reads what the parent sends over a
 *                             KIND channel (unix: a stream socketpair,
 *                             unixdgram: a datagram socketpair, tcp and
 *                             udp: connected over loopback) and writes each
 *                             line to stdout with one write (streams: read
 *                             byte by byte; datagrams: one recv each); the
 *                             parent sends N lines "k\n", one send each
 *   flowprog eventfd N        the parent adds 1 to an eventfd N times; after
 *                             each the child reads the count, writes a line
 *                             to stdout and answers over a pipe
 *   flowprog io N DIR         writes 64 KB to each of N new files in DIR with
 *                             one write and fsyncs it
 *   flowprog evict N          forks N children one after another; each calls
 *                             getppid() and stops (SIGSTOP); once all are
 *                             stopped the parent continues them oldest first,
 *                             and each calls getsid(0) and exits
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
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

/* channel makes a connected pair of KIND: fds[0] to send, fds[1] to
 * receive. */
static int channel(const char *kind, int fds[2], int *dgram)
{
	*dgram = strcmp(kind, "unixdgram") == 0 || strcmp(kind, "udp") == 0;
	if (strncmp(kind, "unix", 4) == 0)
		return socketpair(AF_UNIX, *dgram ? SOCK_DGRAM : SOCK_STREAM, 0, fds);
	int type = *dgram ? SOCK_DGRAM : SOCK_STREAM;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	int l = socket(AF_INET, type, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &len) < 0)
		return -1;
	if (!*dgram && listen(l, 1) < 0)
		return -1;
	int c = socket(AF_INET, type, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a) < 0)
		return -1;
	fds[0] = c;
	if (*dgram) {
		/* The receiver takes datagrams from the sender only. */
		struct sockaddr_in b;
		len = sizeof b;
		if (getsockname(c, (struct sockaddr *)&b, &len) < 0 ||
		    connect(l, (struct sockaddr *)&b, sizeof b) < 0)
			return -1;
		fds[1] = l;
		return 0;
	}
	fds[1] = accept(l, NULL, NULL);
	close(l);
	return fds[1] < 0 ? -1 : 0;
}

static int socktest(const char *kind, int n)
{
	int fds[2], dgram;
	char buf[64];
	if (channel(kind, fds, &dgram) < 0) {
		perror(kind);
		return 1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		size_t len = 0;
		for (int got = 0; got < n;) {
			if (dgram) {
				ssize_t r = recv(fds[1], buf, sizeof buf, 0);
				if (r <= 0)
					_exit(1);
				writeall(1, buf, r);
				got++;
				continue;
			}
			if (read(fds[1], buf + len, 1) != 1)
				_exit(1);
			if (buf[len++] == '\n' || len == sizeof buf) {
				writeall(1, buf, len);
				len = 0;
				got++;
			}
		}
		_exit(0);
	}
	for (int k = 1; k <= n; k++) {
		int len = snprintf(buf, sizeof buf, "%d\n", k);
		if (send(fds[0], buf, len, 0) != len)
			return 1;
		if (dgram && k % 64 == 0)
			usleep(1000); /* a datagram socket drops what overflows */
	}
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int eventfdtest(int n)
{
	int efd = eventfd(0, 0), back[2];
	uint64_t v = 1;
	char c = 'x';
	if (efd < 0 || pipe(back) < 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		for (int k = 1; k <= n; k++) {
			char buf[32];
			if (read(efd, &v, sizeof v) != sizeof v)
				_exit(1);
			writeall(1, buf, snprintf(buf, sizeof buf, "%d\n", k));
			writeall(back[1], &c, 1);
		}
		_exit(0);
	}
	for (int k = 1; k <= n; k++) {
		writeall(efd, (char *)&v, sizeof v);
		if (read(back[0], &c, 1) != 1)
			return 1;
	}
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int iotest(int n, const char *dir)
{
	static char data[65536];
	char path[4096];
	memset(data, 'x', sizeof data);
	for (int k = 1; k <= n; k++) {
		snprintf(path, sizeof path, "%s/flowio%d", dir, k);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			perror(path);
			return 1;
		}
		writeall(fd, data, sizeof data);
		if (fsync(fd) < 0) {
			perror("fsync");
			return 1;
		}
		close(fd);
	}
	return 0;
}

static int evicttest(int n)
{
	pid_t *pids = calloc(n, sizeof *pids);
	int status;
	if (pids == NULL)
		return 1;
	for (int k = 0; k < n; k++) {
		pids[k] = fork();
		if (pids[k] < 0)
			return 1;
		if (pids[k] == 0) {
			getppid();
			raise(SIGSTOP);
			getsid(0);
			_exit(0);
		}
		if (waitpid(pids[k], &status, WUNTRACED) < 0 || !WIFSTOPPED(status))
			return 1;
	}
	for (int k = 0; k < n; k++) {
		kill(pids[k], SIGCONT);
		if (waitpid(pids[k], &status, 0) < 0 || !WIFEXITED(status))
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "io") == 0)
		return iotest(atoi(argv[2]), argv[3]);
	if (argc >= 3 && strcmp(argv[1], "evict") == 0)
		return evicttest(atoi(argv[2]));
	if (argc >= 3 && strcmp(argv[1], "eventfd") == 0)
		return eventfdtest(atoi(argv[2]));
	if (argc >= 4 && strcmp(argv[1], "sock") == 0)
		return socktest(argv[2], atoi(argv[3]));
	if (argc >= 2 && strcmp(argv[1], "fork") == 0)
		return forktest();
	if (argc >= 3 && strcmp(argv[1], "produce") == 0)
		return produce(atoi(argv[2]));
	if (argc >= 2 && strcmp(argv[1], "relay") == 0)
		return relay();
	if (argc >= 4 && strcmp(argv[1], "pool") == 0)
		return pool(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: flowprog fork | produce N | relay | pool N W | sock KIND N | eventfd N | io N DIR | evict N\n");
	return 2;
}
