/* evaltime.c: a constructor and main() that each write a line, for the
 * hold points of dtrace -c (the evaltime option). With an argument the
 * constructor exits: main() is never reached. */
#include <unistd.h>

__attribute__((constructor)) static void ctor(int argc)
{
	write(1, "ctor\n", 5);
	if (argc > 1)
		_exit(3);
}

int main(void)
{
	write(1, "main\n", 5);
	return 0;
}
