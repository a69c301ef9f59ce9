/*
 * pingpong (built as pp): one side of a ping-pong over a byte channel, for the merged
 * timeline test. "pp g DEVICE N" (the guest) opens DEVICE, a
 * virtio-serial port, and N times writes an 8-byte message and reads the
 * answer; "pp h SOCKET N" (the host) connects to SOCKET, the port's UNIX
 * socket, and N times reads a message and writes it back. The channel is
 * fd 10, so that a D predicate tells its reads and writes from the
 * dynamic loader's.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void full(int write_it, char *buf) {
	int done = 0;
	while (done < 8) {
		ssize_t n = write_it ? write(10, buf + done, 8 - done) : read(10, buf + done, 8 - done);
		if (n <= 0) {
			perror("pp");
			exit(1);
		}
		done += n;
	}
}

int main(int argc, char **argv) {
	if (argc != 4)
		return 2;
	int fd, n = atoi(argv[3]);
	if (argv[1][0] == 'g') {
		fd = open(argv[2], O_RDWR);
	} else {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		strncpy(sa.sun_path, argv[2], sizeof sa.sun_path - 1);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
			fd = -1;
	}
	if (fd < 0 || dup2(fd, 10) < 0) {
		perror(argv[2]);
		return 1;
	}
	char buf[9];
	for (int i = 0; i < n; i++) {
		if (argv[1][0] == 'g') {
			snprintf(buf, sizeof buf, "ping%04d", i % 10000);
			full(1, buf);
			full(0, buf);
		} else {
			full(0, buf);
			full(1, buf);
		}
	}
	return 0;
}
