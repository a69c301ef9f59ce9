// Package consumer reads what the probes send to user space. This part of
// it (buffer*.go, drops*.go) owns the principal buffers: one perf ring
// per CPU behind the dt_buf PERF_EVENT_ARRAY. It hands raw records to a
// callback as (cpu, bytes), one CPU after another in CPU order and in
// order within a CPU, as dtrace(1M) consumes its per-CPU buffers; it
// counts the records the kernel could not store, per CPU, and words them
// as dtrace does ("1 drop on CPU 0").
//
// The buffer policies of DTrace are kept as follows. switch (the default):
// records are consumed at every Poll, and whatever did not fit in the ring
// in between is a drop. fill: records are delivered until the bytes
// charged on a CPU would exceed bufsize; from then on that CPU is full,
// its records are dropped and Filled reports it, so that the library can
// stop tracing as dtrace does; Reserve bytes stay free for the END records
// (after Ending). ring: records are read continuously into a
// user-space ring of bufsize bytes per CPU that keeps the newest ones, and
// are delivered only by Flush (at exit or on a snapshot).
//
// The kernel reports lost records only in front of the next record that
// fits, so at exit the library calls Flush, which drains, sends an EPID-0
// marker on every CPU (never delivered), drains once more and, in ring
// policy, delivers the kept records; the Drops after it are complete.
//
// Decoding records by EPID belongs to the library; this package delivers
// bytes. A sample's bytes may carry up to 7 bytes of padding after the
// record, which the EPID's layout makes harmless.
package consumer
