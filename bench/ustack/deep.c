/*
 * deep: spin() under 16 frames of rec() under main, built with frame
 * pointers so that the frame-pointer walk and the CFI walk see the same
 * stack (bench/ustack.sh).
 */
volatile unsigned long sink;

__attribute__((noinline)) void spin(void)
{
	for (;;)
		sink++;
}

__attribute__((noinline)) void rec(int n)
{
	if (n == 0)
		spin();
	else
		rec(n - 1);
	sink++; /* not a tail call */
}

int main(void)
{
	rec(15);
	return 0;
}
