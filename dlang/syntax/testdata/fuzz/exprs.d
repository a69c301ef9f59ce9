BEGIN
{
	x = a ? b : c ^^ d || e && f | g ^ h & i == j != k < l > m <= n >= o << p >> q + r - s * t / u % v;
	y = -x + !x + ~x + *p + &q + ++x + x++ + --x + x--;
	z = offsetof(struct foo, a) + xlate<foo_t *>(curthread)->a + vmlinux`jiffies;
	if (x) { trace('ab'); } else if (y) trace("\x41\101\n"); else ;
	this->v = 0x10ull + 010 + $1 + $$2 + $pid;
	@ = count();
}
tick-1s { exit(0); }
