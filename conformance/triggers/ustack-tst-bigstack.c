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

/*
 * The two functions of the pair: each calls the other while the stack
 * grows, then waits in an ioctl whose bogus arguments (cmd) tell the
 * two apart.
 */
#define GROW(name, other, cmd)				\
	int name(int frame)				\
	{						\
		if (more(frame))			\
			frame = other(frame + 1);	\
		for (;;)				\
			ioctl(cmd, cmd, NULL);		\
		return frame;				\
	}

GROW(grow, grow1, -1)
GROW(grow1, grow, -2)

int main(void)
{
	return grow(1);
}
