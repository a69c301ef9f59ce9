/*
 * USDT argument test: fire test_prov:::place with ten known arguments,
 * forever.
 */
#include <sys/sdt.h>

int main(void)
{
	for (;;)
		STAP_PROBE10(test_prov, place, 10, 4, 20, 30, 40, 50, 60, 70, 80, 90);
}
