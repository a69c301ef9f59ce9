#pragma D option quiet
syscall::read:entry,
syscall::write:entry
/pid == $target && arg2 > 0/
{
	self->ts = timestamp;
	@bytes[execname, probefunc] = sum(arg2);
	printf("%s %d\n", stringof(args[1]), (int)arg0);
}
