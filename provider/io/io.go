// Package io is DTrace's io provider on Linux tracepoints: block I/O
// submitted and completed, with the arguments DTrace defines (bufinfo_t
// and devinfo_t through the D library's translators from struct bio,
// fileinfo_t from struct file). Every probe passes a bio, as in
// dtrace-utils, so that one clause can name them all.
//
//	probe   runs on                     fires
//	start   block:block_bio_queue       as a thread submits a bio (in its context)
//	done    block:block_rq_complete     as the device completes a request: its first
//	                                    bio (often in an interrupt); a bio-based
//	        block:block_bio_complete    device's (device mapper): the bio
//
//	wait-start  sched:sched_switch of a thread     as it goes to sleep in io_schedule(),
//	            that submitted a bio               args[0..1] that bio (wait.go)
//	wait-done   sched_exit_tp (or a kprobe on       as it runs again in io_schedule()
//	            finish_task_switch)
//
// The block layer does not tell which file a request is for: args[2]
// translates a NULL file ("<none>").
package io

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/ktrace"
)

// Name is the provider's name; its probes are in module vmlinux with no
// function, as in DTrace for Linux.
const (
	Name   = "io"
	Module = "vmlinux"
)

var (
	args  = []string{"struct bio *", "struct bio *", "struct file *"}
	xargs = []string{"bufinfo_t *", "devinfo_t *", "fileinfo_t *"}
)

// queued: block_bio_queue(bio).
func queued(e *ktrace.Emitter) error {
	e.CtxArg(0, 0)
	e.CtxArg(1, 0)
	return nil
}

// completed: block_rq_complete(rq, error, nr_bytes), where the request's
// bio is rq->bio (none: no firing), or block_bio_complete(q, bio). The
// program reads the first two arguments, which both have, and tells them
// apart by the second: a blk_status_t error code is small, a bio's
// address is not.
func completed(e *ktrace.Emitter) error {
	off, _, err := ktrace.Offset("request", "bio")
	if err != nil {
		return err
	}
	rq, end := e.Label(), e.Label()
	e.Ctx(asm.R0, 1)
	e.Emit(asm.JLT.Imm(asm.R0, 0x10000, rq))
	e.SetArg(0, asm.R0)
	e.SetArg(1, asm.R0)
	e.Emit(asm.Ja.Label(end))
	e.Mark(rq)
	e.Ctx(asm.R8, 0)
	e.Load(asm.R0, asm.R8, off, 8)
	e.Emit(asm.JEq.Imm(asm.R0, 0, provider.SkipLabel))
	e.SetArg(0, asm.R0)
	e.SetArg(1, asm.R0)
	e.Mark(end)
	return nil
}

// New returns the io provider.
func New() *ktrace.Provider {
	return ktrace.New(Name, append([]ktrace.Spec{
		{Module: Module, Name: "done", Sources: ktrace.Sources("block", "block_rq_complete", "block_bio_complete"),
			Args: args, XArgs: xargs, Prologue: completed},
		{Module: Module, Name: "start", Sources: ktrace.Sources("block", "block_bio_queue"),
			Args: args, XArgs: xargs, Prologue: queued},
	}, waitSpecs()...))
}

// FlowName is the provider of the block I/O transports of flow variables
// (docs/FLOW.md), internal (provider.Internal): bio-queue fires as a
// thread submits a bio (block_bio_queue) or the block layer splits one
// off it (block_split), bio-done as a bio that went through
// block_bio_queue completes (block_bio_complete); arg0 is the bio.
const FlowName = "__flow_io"

// bio: the struct bio * at argument i of the tracepoint.
func bio(i int) func(e *ktrace.Emitter) error {
	return func(e *ktrace.Emitter) error {
		e.CtxArg(0, i)
		return nil
	}
}

// NewFlow returns the provider of the block I/O transports.
func NewFlow() *ktrace.Provider {
	return ktrace.NewInternal(FlowName, []ktrace.Spec{
		{Module: Module, Name: "bio-queue", Sources: ktrace.Sources("block", "block_bio_queue", "block_split"),
			Args: []string{"struct bio *"}, Prologue: bio(0)},
		{Module: Module, Name: "bio-done", Sources: ktrace.Sources("block", "block_bio_complete"),
			Args: []string{"struct bio *"}, Prologue: bio(1)},
	})
}
