// Package consumer owns what the probes send to user space, from the
// kernel's buffers to typed events.
//
// Buffers (buffer*.go) are the principal buffers: one perf ring per CPU
// behind the dt_buf PERF_EVENT_ARRAY. They hand raw records to a
// callback as (cpu, bytes), one CPU after another in CPU order and in
// order within a CPU, as dtrace(1M) consumes its per-CPU buffers, and
// count the records the kernel could not store, per CPU. Once started,
// a reader goroutine per CPU copies its ring into a bounded backlog in
// user space whenever the ring is a quarter full, so that the rings
// empty at the rate records arrive; the consumer's one thread decodes
// the backlogs (records decode into slab-allocated values, decode.go).
//
// A Consumer (consumer.go) drives one session: Work polls the buffers,
// watches the run state (dt_state) and fires END when exit() was called,
// the fill buffer filled or Stop asked. Each record is decoded by its
// EPID into an output.Record (records.go, decode.go) and its items are
// carried out in order (actions.go): exit()'s status, clear(), trunc(),
// normalize() and printa()'s aggregation snapshots (aggs.go: the per-CPU
// maps and their front caches, read at most once per aggrate under one,
// rates.go), setopt(), freopen()'s file, system()'s command, and the
// speculations that commit() and discard() end (spec.go). Each item goes
// to an output.Renderer as it is carried out, so that a renderer sees
// the state at its place in the record. Fault records (faults.go), drop
// counts (drops.go: principal and aggregation drops per CPU, dt_cpustate's
// counters) and library-level errors become events too; at exit
// Aggregations hands over every aggregation.
//
// The consumer prints nothing itself: text is package output/text's.
// A sample's bytes may carry up to 7 bytes of padding after the record,
// which the EPID's layout makes harmless.
//
// The buffer policies of DTrace are kept as follows. switch (the default):
// records are consumed at every Poll, and whatever did not fit in the ring
// in between is a drop. fill: records are delivered until the bytes
// charged on a CPU would exceed bufsize; from then on that CPU is full,
// its records are dropped and Filled reports it, so that tracing stops as
// dtrace does; Reserve bytes stay free for the END records (after
// Ending). ring: records are read continuously into a user-space ring of
// bufsize bytes per CPU that keeps the newest ones (recring.go: one
// buffer allocated once), and are delivered only by Flush (at exit or on
// a snapshot), every CPU's merged in time order by the samples' times.
//
// Each Poll or Drain delivers for at most a slice of time (SetSlice;
// the Consumer sets 100 ms), the rest staying queued in order (Pending),
// so that a caller under a flood of records gets control back to act on
// a signal; Stop does not drain: Work delivers what came before, a slice
// per call, then fires END. Quiesce ends recording without ending the
// run, and DropBacklog drops (and counts) what is still queued, for a
// stop that may not wait (dtrace(1M) on SIGINT). printa() reads its
// aggregation afresh only when its record came out of the kernel after
// the last read (Buffers.RecordSeq and Seq), not at every call.
//
// Snapshots (beyond DTrace): Snapshot, on kill -USR1 or when a record's
// snapshot() fired, hands a header event (output.Snapshotter) and then
// what Flush delivers to the renderer; tracing goes on.
//
// The kernel reports lost records only in front of the next record that
// fits, so at exit Flush drains, sends an EPID-0 marker on every CPU
// (never delivered), drains once more and, in ring policy, delivers the
// kept records; the Drops after it are complete.
package consumer
