// Package sched is DTrace's sched provider on Linux tracepoints: threads
// going on and off CPU, being made runnable, sleeping, being preempted,
// changing priority and clock ticks, with the arguments DTrace defines
// (lwpsinfo_t, psinfo_t and cpuinfo_t through the D library's
// translators from struct task_struct).
//
//	probe        runs on                              fires
//	on-cpu       sched_exit_tp, after a switch         in the thread now running
//	remain-cpu   sched_exit_tp, no switch             in the thread that keeps running
//	off-cpu      sched:sched_switch                   in the thread leaving; args[0..1] the next one
//	preempt      sched:sched_switch, prev preempted   in the thread being preempted
//	             or still runnable (involuntary)
//	sleep        sched:sched_switch, prev sleeping     in the thread going to sleep
//	dequeue      sched:sched_switch, prev leaving the  args[0..1] that thread, args[2] its CPU,
//	             run queue (sleeping, stopped, dead)  args[3] the dequeue flags (DEQUEUE_SLEEP)
//	enqueue      sched:sched_wakeup{,_new}            args[0..1] the thread made runnable, args[2] its CPU
//	wakeup       sched:sched_waking                   in the waker; args[0..1] the thread woken
//	change-pri   sched:sched_pi_setprio               args[0..1] the thread, args[2] its new priority
//	surrender    sched_set_need_resched_tp, another   args[0..1] the thread another CPU tells to
//	             CPU's thread                         give up its CPU
//	tick         timer:hrtimer_expire_entry of the    in the thread the tick interrupted
//	             scheduler tick (tick_nohz_handler)
//
// sched_exit_tp and sched_set_need_resched_tp are bare tracepoints (raw
// tracepoints only); sched_exit_tp runs at the end of __schedule() and
// where a new thread first runs (schedule_tail), so on-cpu fires for new
// threads too.
//
// Kernels before 6.16 (Debian's 6.1 and 6.12) have neither: there
// on-cpu runs on a kprobe on finish_task_switch (the end of every switch,
// in the thread now running, new ones included), and remain-cpu and
// surrender are not offered.
//
// preempt is DTrace's: the thread loses its CPU without having blocked
// (illumos calls preempt() when a thread's quantum expires or a thread
// of higher priority is runnable). On Linux that is every involuntary
// switch: the kernel preempted it (sched_switch's preempt flag) or it
// leaves still runnable (prev_state 0), as a user thread whose time is up
// leaves at its return to user mode through schedule(), which the
// kernel counts in nivcsw but does not flag as a preemption.
package sched

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/internal/tracefs"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/ktrace"
	"github.com/dtrace-go/dtrace/symbol"
)

// Name is the provider's name; its probes are in module vmlinux with no
// function, as in DTrace for Linux.
const (
	Name   = "sched"
	Module = "vmlinux"
)

// taskSleeping are the task states of a thread that sleeps
// (TASK_INTERRUPTIBLE, TASK_UNINTERRUPTIBLE); any state but running
// (0) takes a thread that is not preempted off the run queue.
const (
	taskSleeping = 0x3
	taskAny      = -1
)

// tickHandler is the kernel function the scheduler tick's hrtimer runs;
// kernels before 6.10 call it tick_sched_timer.
const (
	tickHandler    = "tick_nohz_handler"
	oldTickHandler = "tick_sched_timer"
)

// dequeueSleep is the kernel's DEQUEUE_SLEEP (kernel/sched/sched.h).
const dequeueSleep = 1

var (
	thread    = []string{"struct task_struct *", "struct task_struct *"}
	threadX   = []string{"lwpsinfo_t *", "psinfo_t *"}
	threadCPU = []string{"struct task_struct *", "struct task_struct *", "struct task_struct *"}
	threadCPX = []string{"lwpsinfo_t *", "psinfo_t *", "cpuinfo_t *"}
)

// bare names a bare tracepoint of the scheduler (no tracefs event).
func bare(name string) []ktrace.Source {
	return []ktrace.Source{{Group: "sched", Name: name, Bare: true}}
}

// New returns the sched provider.
func New() *ktrace.Provider {
	specs := []ktrace.Spec{
		{Name: "change-pri", Sources: ktrace.Sources("sched", "sched_pi_setprio"),
			Args: []string{"struct task_struct *", "struct task_struct *", "int"}, XArgs: []string{"lwpsinfo_t *", "psinfo_t *", ""},
			Prologue: changePri},
		{Name: "dequeue", Sources: ktrace.Sources("sched", "sched_switch"), Args: append(threadCPU[:3:3], "int"), XArgs: append(threadCPX[:3:3], ""),
			Prologue: blocking(taskAny, true)},
		{Name: "enqueue", Sources: ktrace.Sources("sched", "sched_wakeup", "sched_wakeup_new"), Args: threadCPU, XArgs: threadCPX,
			Prologue: func(e *ktrace.Emitter) error {
				for i := 0; i < 3; i++ {
					e.CtxArg(i, 0)
				}
				return nil
			}},
		{Name: "off-cpu", Sources: ktrace.Sources("sched", "sched_switch"), Args: thread, XArgs: threadX,
			Prologue: func(e *ktrace.Emitter) error {
				e.CtxArg(0, 2)
				e.CtxArg(1, 2)
				return nil
			}},
		{Name: "on-cpu", Sources: bare("sched_exit_tp"), Prologue: flag(true),
			Alt: &ktrace.Spec{Kind: ktrace.Kprobe, Sources: []ktrace.Source{{Name: "finish_task_switch"}}}},
		{Name: "preempt", Sources: ktrace.Sources("sched", "sched_switch"), Prologue: preempted},
		{Name: "remain-cpu", Sources: bare("sched_exit_tp"), Prologue: flag(false)},
		{Name: "sleep", Sources: ktrace.Sources("sched", "sched_switch"), Prologue: blocking(taskSleeping, false)},
		{Name: "surrender", Sources: bare("sched_set_need_resched_tp"), Args: thread, XArgs: threadX,
			Prologue: surrender},
		{Name: "tick", Kind: ktrace.Event, Sources: ktrace.Sources("timer", "hrtimer_expire_entry"), Args: thread, XArgs: threadX,
			Prologue: tick},
		{Name: "wakeup", Sources: ktrace.Sources("sched", "sched_waking"), Args: thread, XArgs: threadX,
			Prologue: func(e *ktrace.Emitter) error {
				e.CtxArg(0, 0)
				e.CtxArg(1, 0)
				return nil
			}},
	}
	for i := range specs {
		specs[i].Module = Module
	}
	return ktrace.New(Name, specs)
}

// flag fires when the bare tracepoint's bool argument (is_switch of
// sched_exit_tp, preempt of sched_entry_tp) is set, or with set false
// when it is clear.
func flag(set bool) func(e *ktrace.Emitter) error {
	return func(e *ktrace.Emitter) error {
		e.Ctx(asm.R0, 0)
		e.Emit(asm.And.Imm(asm.R0, 0xff))
		if set {
			e.Emit(asm.JEq.Imm(asm.R0, 0, provider.SkipLabel))
		} else {
			e.Emit(asm.JNE.Imm(asm.R0, 0, provider.SkipLabel))
		}
		return nil
	}
}

// preempted: sched_switch(preempt, prev, next, prev_state) of a thread
// the kernel preempted or that leaves still runnable (state 0).
func preempted(e *ktrace.Emitter) error {
	fire := e.Label()
	e.Ctx(asm.R0, 0)
	e.Emit(asm.And.Imm(asm.R0, 0xff), asm.JNE.Imm(asm.R0, 0, fire))
	e.Ctx(asm.R0, 3)
	e.Emit(asm.Mov.Reg32(asm.R0, asm.R0), asm.JNE.Imm(asm.R0, 0, provider.SkipLabel))
	e.Mark(fire)
	return nil
}

// blocking: sched_switch(preempt, prev, next, prev_state) of a thread
// that is not preempted and leaves in one of the states of mask (the
// scheduler then takes it off the run queue); dequeue passes it, its CPU
// and, as args[3], the flags dtrace-utils passes from dequeue_task():
// DEQUEUE_SLEEP (1), the flag of every dequeue of a thread that blocks,
// the only kind this probe sees.
func blocking(mask int32, args bool) func(e *ktrace.Emitter) error {
	return func(e *ktrace.Emitter) error {
		e.Ctx(asm.R0, 0)
		e.Emit(asm.And.Imm(asm.R0, 0xff), asm.JNE.Imm(asm.R0, 0, provider.SkipLabel))
		e.Ctx(asm.R0, 3)
		e.Emit(asm.Mov.Reg32(asm.R0, asm.R0))
		if mask != taskAny {
			e.Emit(asm.And.Imm(asm.R0, mask))
		}
		e.Emit(asm.JEq.Imm(asm.R0, 0, provider.SkipLabel))
		if args {
			for i := 0; i < 3; i++ {
				e.CtxArg(i, 1)
			}
			e.Emit(asm.Mov.Imm(asm.R0, dequeueSleep))
			e.SetArg(3, asm.R0)
		}
		return nil
	}
}

// changePri: sched_pi_setprio(task, pi_task); the new priority is the
// task's normal priority, or the donor's if that is higher (lower in
// number), as the tracepoint's own record computes it.
func changePri(e *ktrace.Emitter) error {
	offs, err := ktrace.Offsets("task_struct.normal_prio", "task_struct.prio")
	if err != nil {
		return err
	}
	normal, prio := offs[0], offs[1]
	e.CtxArg(0, 0)
	e.CtxArg(1, 0)
	e.Ctx(asm.R8, 0)
	e.Read(2, asm.R8, normal, 4)
	done := e.Label()
	e.Ctx(asm.R8, 1)
	e.Emit(asm.JEq.Imm(asm.R8, 0, done))
	e.Read(3, asm.R8, prio, 4)
	e.Emit(
		asm.LoadMem(asm.R1, asm.R7, e.Arg(2), asm.Word),
		asm.LoadMem(asm.R2, asm.R7, e.Arg(3), asm.Word),
		provider.StoreImmDW(asm.R7, e.Arg(3), 0),
		asm.JSGE.Reg(asm.R2, asm.R1, done),
		asm.StoreMem(asm.R7, e.Arg(2), asm.R2, asm.DWord),
	)
	e.Mark(done)
	return nil
}

// surrender: sched_set_need_resched_tp(task, cpu, tif) for the thread
// running on another CPU than this one.
func surrender(e *ktrace.Emitter) error {
	e.Emit(asm.FnGetSmpProcessorId.Call())
	e.Ctx(asm.R1, 1)
	e.Emit(asm.Mov.Reg32(asm.R1, asm.R1), asm.JEq.Reg(asm.R0, asm.R1, provider.SkipLabel))
	e.CtxArg(0, 0)
	e.CtxArg(1, 0)
	return nil
}

// tick: the expiry of the hrtimer that runs the scheduler tick; the
// record's function field is the timer's handler.
func tick(e *ktrace.Emitter) error {
	root, err := kernel.MountTracefs()
	if err != nil {
		return err
	}
	f, err := tracefs.ReadFormat(root, "timer", "hrtimer_expire_entry")
	if err != nil {
		return err
	}
	fn, ok := f.Field("function")
	if !ok || fn.Size != 8 {
		return fmt.Errorf("sched: hrtimer_expire_entry has no function field")
	}
	ks, err := symbol.KernelSymbols()
	if err != nil {
		return err
	}
	addr, ok := ks.Addr(tickHandler)
	if !ok || addr == 0 {
		addr, ok = ks.Addr(oldTickHandler)
	}
	if !ok || addr == 0 {
		return fmt.Errorf("sched: kernel symbol %s not found", tickHandler)
	}
	e.Field(asm.R1, int16(fn.Offset), 8, false)
	e.Emit(asm.LoadImm(asm.R2, int64(addr), asm.DWord), asm.JNE.Reg(asm.R1, asm.R2, provider.SkipLabel),
		asm.FnGetCurrentTask.Call())
	e.SetArg(0, asm.R0)
	e.SetArg(1, asm.R0)
	return nil
}
