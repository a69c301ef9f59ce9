/* evaltime.c: a constructor and main() that each write a line, for the
 * hold points of dtrace -c (the evaltime option). */
#include <unistd.h>

__attribute__((constructor)) static void ctor(void)
{
	write(1, "ctor\n", 5);
}

int main(void)
{
	write(1, "main\n", 5);
	return 0;
}
