#!/usr/sbin/dtrace -qs
/*
 * fleet.d: what the example service exports. System calls by
 * container and program, their latency, and read sizes; Prometheus
 * scrapes them as dtrace_calls, dtrace_latency_ns and dtrace_readsize,
 * OTLP receives them as dtrace.calls, dtrace.latency_ns and
 * dtrace.readsize.
 */
syscall:::entry
{
	self->ts = timestamp;
	@calls[zonename, execname] = count();
}

syscall:::return
/self->ts/
{
	@latency_ns[probefunc] = quantize(timestamp - self->ts);
	self->ts = 0;
}

syscall::read:return
/arg0 > 0/
{
	@readsize = llquantize(arg0, 10, 0, 6, 10);
}
