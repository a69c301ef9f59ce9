package io

import (
	"fmt"
	"sync"

	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/dtrace-go/dtrace/internal/kfeature"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/ktrace"
)

// The wait probes: a thread waits for block I/O when it sleeps in
// io_schedule() (task_struct.in_iowait set); the I/O it waits for is the
// last bio it submitted (block:block_bio_queue in its context), a copy of
// which dt_io_wait keeps per thread. wait-start fires as the thread goes
// off CPU to wait (sched:sched_switch), wait-done as it runs again,
// still in io_schedule() (sched_exit_tp, or a kprobe on
// finish_task_switch where the kernel lacks that bare tracepoint). Both
// pass the copy of the bio: the bio itself may be gone once the I/O
// completed. A thread that waits for I/O it did not submit (a page
// another thread is reading) fires neither.
const waitMap = "dt_io_wait"

// Cookies of the kprobes of wait-done.
const (
	cookieSwitch = 1 // finish_task_switch
	cookieSubmit = 2 // submit_bio: remember the bio
)

// waitArgs are the wait probes' arguments: the bio (bufinfo_t,
// devinfo_t) and no file.
var (
	waitArgs  = []string{"struct bio *", "struct bio *", "struct file *"}
	waitXArgs = []string{"bufinfo_t *", "devinfo_t *", "fileinfo_t *"}
)

type waitLayout struct {
	bioSize             int32 // sizeof(struct bio)
	iowaitByte, iowaitM int32 // task_struct.in_iowait: byte offset and bit mask
	stateOff            int32 // task_struct.__state
}

var (
	layoutOnce sync.Once
	layout     waitLayout
	layoutErr  error
)

func waitOffsets() (*waitLayout, error) {
	layoutOnce.Do(func() {
		spec, err := kfeature.KernelSpec()
		if err != nil {
			layoutErr = err
			return
		}
		var bio *btf.Struct
		if err := spec.TypeByName("bio", &bio); err != nil {
			layoutErr = err
			return
		}
		layout.bioSize = int32(bio.Size)
		var task *btf.Struct
		if err := spec.TypeByName("task_struct", &task); err != nil {
			layoutErr = err
			return
		}
		found := false
		for _, m := range task.Members {
			if m.Name == "in_iowait" {
				bit := uint32(m.Offset)
				layout.iowaitByte, layout.iowaitM = int32(bit/8), int32(1)<<(bit%8)
				found = true
			}
		}
		if !found {
			layoutErr = fmt.Errorf("io: task_struct has no in_iowait")
			return
		}
		layout.stateOff, _, layoutErr = ktrace.Offset("task_struct", "__state")
	})
	return &layout, layoutErr
}

// waitMaps is the map the wait probes share.
func waitMaps() []provider.HashMap {
	l, err := waitOffsets()
	if err != nil {
		return nil
	}
	return []provider.HashMap{{Name: waitMap, KeySize: 4, ValueSize: uint32(l.bioSize), MaxEntries: 4096}}
}

// remember copies the bio in R8 into this thread's entry of dt_io_wait.
func remember(e *ktrace.Emitter, l *waitLayout) {
	e.ThreadEntry(waitMap, true)
	e.Emit(
		asm.Mov.Reg(asm.R1, asm.R0),
		asm.Mov.Imm(asm.R2, l.bioSize),
		asm.Mov.Reg(asm.R3, asm.R8),
		asm.FnProbeReadKernel.Call(),
		e.Skip(),
	)
}

// fireWaiting fires if the current thread is in io_schedule() (and, with
// sleeping, leaves the CPU asleep) and has a bio remembered: args[0] and
// args[1] point to the copy.
func fireWaiting(e *ktrace.Emitter, l *waitLayout, sleeping bool) {
	e.Emit(asm.FnGetCurrentTask.Call(), asm.Mov.Reg(asm.R8, asm.R0))
	e.Load(asm.R0, asm.R8, l.iowaitByte, 1)
	e.Emit(asm.And.Imm(asm.R0, l.iowaitM), asm.JEq.Imm(asm.R0, 0, provider.SkipLabel))
	if sleeping {
		e.Load(asm.R0, asm.R8, l.stateOff, 4)
		e.Emit(asm.JEq.Imm(asm.R0, 0, provider.SkipLabel))
	}
	e.ThreadEntry(waitMap, false)
	e.SetArg(0, asm.R0)
	e.SetArg(1, asm.R0)
}

// waitRaw is the prologue of a wait probe on raw tracepoints: block_bio_queue
// (bio) and a scheduler tracepoint whose first argument is a bool
// (sched_switch's preempt, sched_exit_tp's is_switch). The program reads
// only that first argument, which tells the two apart (a bool is 0 or 1,
// a bio's address is not), since the kernel refuses to attach a program
// that reads past the arguments a tracepoint has.
func waitRaw(start bool) func(e *ktrace.Emitter) error {
	return func(e *ktrace.Emitter) error {
		l, err := waitOffsets()
		if err != nil {
			return err
		}
		sched := e.Label()
		e.Ctx(asm.R8, 0)
		e.Emit(asm.JLE.Imm(asm.R8, 1, sched))
		remember(e, l)
		e.Mark(sched)
		if start {
			// A preempted thread is not waiting.
			e.Ctx(asm.R0, 0)
			e.Emit(asm.JNE.Imm(asm.R0, 0, provider.SkipLabel))
		} else {
			// sched_exit_tp without a switch: still the same thread.
			e.Ctx(asm.R0, 0)
			e.Emit(asm.JEq.Imm(asm.R0, 0, provider.SkipLabel))
		}
		fireWaiting(e, l, start)
		return nil
	}
}

// waitKprobe is wait-done's prologue on kprobes: submit_bio remembers its
// bio (the first argument), finish_task_switch fires.
func waitKprobe(e *ktrace.Emitter) error {
	l, err := waitOffsets()
	if err != nil {
		return err
	}
	fire := e.Label()
	e.Cookie()
	e.Emit(asm.JEq.Imm(asm.R0, cookieSwitch, fire))
	e.Emit(asm.LoadMem(asm.R8, asm.R6, firstArgReg, asm.DWord))
	remember(e, l)
	e.Mark(fire)
	fireWaiting(e, l, false)
	return nil
}

// waitSpecs are the wait-start and wait-done probes.
func waitSpecs() []ktrace.Spec {
	maps := waitMaps
	return []ktrace.Spec{
		{Module: Module, Name: "wait-done", Maps: maps, Args: waitArgs, XArgs: waitXArgs,
			Sources:  []ktrace.Source{{Group: "block", Name: "block_bio_queue"}, {Group: "sched", Name: "sched_exit_tp", Bare: true}},
			Prologue: waitRaw(false),
			Alt: &ktrace.Spec{Kind: ktrace.Kprobe, Prologue: waitKprobe, Sources: []ktrace.Source{
				{Name: "finish_task_switch", Cookie: cookieSwitch}, {Name: "submit_bio", Cookie: cookieSubmit}}}},
		{Module: Module, Name: "wait-start", Maps: maps, Args: waitArgs, XArgs: waitXArgs,
			Sources:  []ktrace.Source{{Group: "block", Name: "block_bio_queue"}, {Group: "sched", Name: "sched_switch"}},
			Prologue: waitRaw(true)},
	}
}
