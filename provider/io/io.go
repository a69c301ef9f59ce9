// Package io is DTrace's io provider on Linux tracepoints: block device
// requests issued to a driver and completed, with the arguments DTrace
// defines (bufinfo_t and devinfo_t through the D library's translators
// from struct request, fileinfo_t from struct file).
//
//	probe   runs on                     fires
//	start   block:block_rq_issue        as a request goes to the device's driver
//	done    block:block_rq_complete     as the device completes it (often in an interrupt)
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
	"github.com/dtrace-go/dtrace/provider/ktrace"
)

// Name is the provider's name; its probes are in module vmlinux with no
// function, as in DTrace for Linux.
const (
	Name   = "io"
	Module = "vmlinux"
)

var (
	args  = []string{"struct request *", "struct request *", "struct file *"}
	xargs = []string{"bufinfo_t *", "devinfo_t *", "fileinfo_t *"}
)

// request: block_rq_issue(rq) and block_rq_complete(rq, error, nr_bytes).
func request(e *ktrace.Emitter) error {
	e.CtxArg(0, 0)
	e.CtxArg(1, 0)
	return nil
}

// New returns the io provider.
func New() *ktrace.Provider {
	return ktrace.New(Name, append([]ktrace.Spec{
		{Module: Module, Name: "done", Sources: []ktrace.Source{{Group: "block", Name: "block_rq_complete"}},
			Args: args, XArgs: xargs, Prologue: request},
		{Module: Module, Name: "start", Sources: []ktrace.Source{{Group: "block", Name: "block_rq_issue"}},
			Args: args, XArgs: xargs, Prologue: request},
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
