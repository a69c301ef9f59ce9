/*
 * USDT argument-mapping test: the original declares test_prov:::place(i, j)
 * with the translated arguments (j, i, i, j) and fires it with (10, 4).
 * ELF notes of sys/sdt.h carry no mapping, so this trigger fires the probe
 * with the arguments as mapped, (4, 10, 10, 4), forever.
 */
#include <sys/sdt.h>

int main(void)
{
	for (;;)
		STAP_PROBE4(test_prov, place, 4, 10, 10, 4);
}
