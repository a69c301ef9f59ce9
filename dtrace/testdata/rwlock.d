/*
 * rw_read_held(), rw_write_held(), rw_iswriter() on a Linux rwlock_t
 * whose count word is set by hand: free, one reader, two readers, a
 * writer, a reader with a writer waiting.
 */
#pragma D option quiet

BEGIN
{
	p = (rwlock_t *)alloca(sizeof (rwlock_t));
	c = (int *)p;
	*c = 0;
	printf("%d%d%d ", rw_read_held(p), rw_write_held(p), rw_iswriter(p));
	*c = 0x200;
	printf("%d%d%d ", rw_read_held(p), rw_write_held(p), rw_iswriter(p));
	*c = 0x400;
	printf("%d%d%d ", rw_read_held(p), rw_write_held(p), rw_iswriter(p));
	*c = 0xff;
	printf("%d%d%d ", rw_read_held(p), rw_write_held(p), rw_iswriter(p));
	*c = 0x300;
	printf("%d%d%d\n", rw_read_held(p), rw_write_held(p), rw_iswriter(p));
	exit(0);
}
