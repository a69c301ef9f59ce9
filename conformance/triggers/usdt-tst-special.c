/*
 * USDT probes in special places, one per mode given as argument: a probe in
 * a tail-called function (1), and is-enabled checks (semaphores) guarding a
 * probe alone (2), in || (3, 4), in && (5, 6), as a statement (7) and as a
 * function's return value (8). Each mode fires one probe named after it.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <stdlib.h>
#include <sys/sdt.h>

#define SEMAPHORE(p) \
	volatile unsigned short test_prov_##p##_semaphore __attribute__((section(".probes")))
#define ENABLED(p) (test_prov_##p##_semaphore != 0)
#define PROBE(p) STAP_PROBE(test_prov, p)

SEMAPHORE(tail);
SEMAPHORE(enable);
SEMAPHORE(enable_or);
SEMAPHORE(enable_or_2);
SEMAPHORE(enable_and);
SEMAPHORE(enable_and_2);
SEMAPHORE(enable_stmt);
SEMAPHORE(enable_return);

static int mode;

static void tail(void) { PROBE(tail); }

static int enable_return(void) { return ENABLED(enable_return); }

int main(int argc, char **argv)
{
	if (argc < 2)
		return 1;
	mode = atoi(argv[1]);
	switch (mode) {
	case 1:
		tail();
		break;
	case 2:
		if (ENABLED(enable))
			PROBE(enable);
		break;
	case 3:
		if (ENABLED(enable_or) || mode > 0)
			PROBE(enable_or);
		break;
	case 4:
		if (ENABLED(tail) || ENABLED(enable))
			PROBE(enable_or_2);
		break;
	case 5:
		if (ENABLED(enable_and) && mode > 0)
			PROBE(enable_and);
		break;
	case 6:
		if (ENABLED(tail) && ENABLED(enable))
			PROBE(enable_and_2);
		break;
	case 7:
		if (ENABLED(enable_stmt))
			PROBE(enable_stmt);
		break;
	case 8:
		if (enable_return())
			PROBE(enable_return);
		break;
	default:
		return 2;
	}
	return 0;
}
