/*
 * Trigger for tests of the dt_test kernel module's SDT probes: 20 ioctls
 * on its device. Without the module (Linux has none), it makes the same
 * calls on /dev/null, so that tests that only need the trigger to run and
 * exit still work.
 */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(void)
{
	int fd = open("/dev/dtrace/provider/dt_test", O_RDONLY), i;

	if (fd < 0)
		fd = open("/dev/null", O_RDONLY);
	for (i = 0; i < 20; i++)
		ioctl(fd, 128, i);
	close(fd);
	return 0;
}
