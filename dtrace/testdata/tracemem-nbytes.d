/*
 * tracemem(addr, size, nbytes) shows nbytes of the size bytes (all of
 * them for a negative nbytes or one above size, nothing for 0): the
 * corpus's tracemem/tst.tracemem.d on alloca'd memory instead of
 * linux_banner, a data symbol not every kernel lists.
 */
#pragma D option quiet

BEGIN
{
	p = (char *)alloca(16);
	bcopy("Linux version xx", p, 16);
	tracemem(p, 14);
	tracemem(p, 14, -1);
	tracemem(p, 14, 0);
	tracemem(p, 14, 2);
	n = 7;
	tracemem(p, 14, n);
	tracemem(p, 14, 12);
	tracemem(p, 14, 14);
	tracemem(p, 14, 15);
	exit(0);
}
