/*
 * Trigger for deep user stacks: grow and grow1 call each other until the
 * stack holds 4096 of their frames (more than ustackdepth_max allows),
 * then the innermost one calls a bogus ioctl forever.
 */
#include <stddef.h>
#include <sys/ioctl.h>

int limit = 4096;

int grow1(int frame);

static int more(int frame)
{
	return frame < limit--;
}

int grow(int frame)
{
	if (more(frame))
		frame = grow1(frame + 1);
	for (;;)
		ioctl(-1, -1, NULL);
	return frame;
}

int grow1(int frame)
{
	if (more(frame))
		frame = grow(frame + 1);
	for (;;)
		ioctl(-2, -2, NULL);
	return frame;
}

int main(void)
{
	return grow(1);
}
