/* jit: generates code at run time, as a JIT does, and names it in
 * /tmp/perf-PID.map as perf expects: copies a small spinning function
 * into an anonymous executable page, writes "START SIZE jit_spin" to the
 * map, and calls the function in a loop for the seconds its argument
 * gives (1 by default). The map is left behind for the tracer to read
 * after the process exits; whoever runs this removes it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* x86-64: mov $0x100000,%ecx; 1: dec %ecx; jnz 1b; ret */
static const unsigned char spin[] = {0xb9, 0x00, 0x00, 0x10, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3};

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1;
	unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	unsigned char *code = page + 64;
	memcpy(code, spin, sizeof spin);
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
		return 1;
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	if (f == NULL)
		return 1;
	fprintf(f, "%lx %zx jit_spin\n", (unsigned long)code, sizeof spin);
	fclose(f);
	void (*fn)(void) = (void (*)(void))code;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100; i++)
			fn();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	return 0;
}
