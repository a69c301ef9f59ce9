/*
 * The semaphore-guarded probe of the usdt test program: sys/sdt.h gives
 * the probe a semaphore when _SDT_HAS_SEMAPHORES is defined, and the
 * program fires it only while a tracer has raised the semaphore.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

unsigned short myprov_guarded_semaphore __attribute__((section(".probes")));

int guarded(int i)
{
	if (myprov_guarded_semaphore) {
		DTRACE_PROBE1(myprov, guarded, i);
		return 1;
	}
	return 0;
}
