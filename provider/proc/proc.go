// Package proc is DTrace's proc provider on Linux tracepoints: process and
// thread creation, exec, exit and signals, with the arguments DTrace
// defines (psinfo_t and lwpsinfo_t through the D library's translators
// from struct task_struct).
//
//	probe          runs on                                   fires
//	create         task:task_newtask (no CLONE_THREAD)       in the parent, args[0] the child
//	lwp-create     task:task_newtask (CLONE_THREAD)          in the creating thread, args[0..1] the new one
//	start          syscalls:sys_exit_{clone,clone3,fork,vfork}, 0 returned, main thread
//	                                                         in the new process, first return to user mode
//	lwp-start      the same, every thread (after start)          in the new thread
//	exec           syscalls:sys_enter_execve{,at}            as the exec starts (one that fails too);
//	                                                         args[0] the path, copied (exec.go)
//	exec-success   syscalls:sys_exit_execve{,at} == 0         in the new image, as execve returns (as
//	                                                         dtrace-utils: after ptrace's exec stop, so
//	                                                         a process -c holds at evaltime=exec fires it)
//	exec-failure   syscalls:sys_exit_execve{,at} < 0          args[0] the return value, -errno
//	                                                         (-ENOENT), as dtrace-utils passes it
//	exit           sched:sched_process_exit, group dead      args[0] CLD_EXITED, CLD_KILLED or CLD_DUMPED
//	lwp-exit       sched:sched_process_exit                  every exiting thread
//	signal-send    signal:signal_generate                    args[0..1] the target, args[2] the signal
//	signal-discard signal:signal_generate, ignored           as signal-send
//	signal-handle  signal:signal_deliver                     args[0] the signal, args[1] siginfo,
//	                                                         args[2] the handler; a fatal signal
//	                                                         the kernel delivers as SIGKILL is
//	                                                         passed as the signal sent
//	signal-clear   syscalls:sys_exit_rt_sigtimedwait > 0      args[0] the signal a sigwait took
//
// Threads and processes that start in the kernel (kernel threads) do not
// return to user mode: start and lwp-start do not fire for them.
package proc

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/dtrace-go/dtrace/internal/kfeature"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/ktrace"
)

// Name is the provider's name; its probes are in module vmlinux with no
// function, as in DTrace for Linux.
const (
	Name   = "proc"
	Module = "vmlinux"
)

// Kernel constants the prologues test.
const (
	cloneThread   = 0x00010000 // CLONE_THREAD
	signalIgnored = 1          // TRACE_SIGNAL_IGNORED, signal_generate's result
	sigKill       = 9          // SIGKILL
	syscallRetOff = 16         // ret in a syscalls:sys_exit_* record
)

// The exit reasons of proc:::exit (the D library's CLD_* inlines).
const (
	cldExited = 1
	cldKilled = 2
	cldDumped = 3
)

var (
	task    = []string{"struct task_struct *"}
	psinfo  = []string{"psinfo_t *"}
	lwpTask = []string{"struct task_struct *", "struct task_struct *"}
	lwpInfo = []string{"lwpsinfo_t *", "psinfo_t *"}
	sigArgs = []string{"struct task_struct *", "struct task_struct *", "int"}
	sigInfo = []string{"lwpsinfo_t *", "psinfo_t *", ""}
)

// New returns the proc provider.
func New() *ktrace.Provider {
	specs := []ktrace.Spec{
		{Name: "create", Sources: ktrace.Sources("task", "task_newtask"), Args: task, XArgs: psinfo,
			Prologue: newTask(false)},
		{Name: "exec", Kind: ktrace.Event, Sources: execEntries(), Args: []string{"string"},
			Prologue: execPath, Maps: execMaps},
		{Name: "exec-failure", Kind: ktrace.Event, Sources: ktrace.Sources("syscalls", "sys_exit_execve", "sys_exit_execveat"),
			Args: []string{"int"}, Prologue: returned(asm.JSGE, true)},
		{Name: "exec-success", Kind: ktrace.Event, Sources: ktrace.Sources("syscalls", "sys_exit_execve", "sys_exit_execveat"),
			Prologue: returned(asm.JNE, false)},

		{Name: "lwp-create", Sources: ktrace.Sources("task", "task_newtask"), Args: lwpTask, XArgs: lwpInfo,
			Prologue: newTask(true)},
		{Name: "lwp-exit", Sources: ktrace.Sources("sched", "sched_process_exit")},
		// After lwp-exit, which the last thread of a process fires
		// first, as in illumos.
		{Name: "exit", Sources: ktrace.Sources("sched", "sched_process_exit"), Args: []string{"int"},
			Prologue: exitReason},

		{Name: "signal-clear", Kind: ktrace.Event, Sources: ktrace.Sources("syscalls", "sys_exit_rt_sigtimedwait"),
			Args: []string{"int"}, Prologue: returned(asm.JSLE, true)},
		{Name: "signal-discard", Sources: ktrace.Sources("signal", "signal_generate"), Args: sigArgs, XArgs: sigInfo,
			Prologue: sigGenerated(true)},
		{Name: "signal-handle", Sources: ktrace.Sources("signal", "signal_deliver"),
			Args: []string{"int", "struct kernel_siginfo *", "void (*)(void)"}, Prologue: sigDelivered},
		{Name: "signal-send", Sources: ktrace.Sources("signal", "signal_generate"), Args: sigArgs, XArgs: sigInfo,
			Prologue: sigGenerated(false)},
		{Name: "start", Kind: ktrace.Event, Sources: forkReturns(), Prologue: started(true)},
		// After start: a program attached later to the same
		// tracepoint runs later, and a new process's first thread
		// fires start before lwp-start, as in illumos.
		{Name: "lwp-start", Kind: ktrace.Event, Sources: forkReturns(), Prologue: started(false)},
	}
	for i := range specs {
		specs[i].Module = Module
	}
	return ktrace.New(Name, specs)
}

func forkReturns() []ktrace.Source {
	return ktrace.Sources("syscalls", "sys_exit_clone", "sys_exit_clone3", "sys_exit_fork", "sys_exit_vfork")
}

// newTask: task_newtask(task, clone_flags); a new thread shares its
// creator's thread group (CLONE_THREAD).
func newTask(thread bool) func(e *ktrace.Emitter) error {
	return func(e *ktrace.Emitter) error {
		e.Ctx(asm.R1, 1)
		e.Emit(asm.And.Imm(asm.R1, cloneThread))
		if thread {
			e.Emit(asm.JEq.Imm(asm.R1, 0, provider.SkipLabel))
		} else {
			e.Emit(asm.JNE.Imm(asm.R1, 0, provider.SkipLabel))
		}
		e.CtxArg(0, 0)
		if thread {
			e.CtxArg(1, 0)
		}
		return nil
	}
}

// memberArg sets args[i] to the size-byte member of the struct typ that
// the tracepoint's argument ctx points to.
func memberArg(e *ktrace.Emitter, i, ctx int, typ, member string, size int32) error {
	off, _, err := ktrace.Offset(typ, member)
	if err != nil {
		return err
	}
	e.Ctx(asm.R8, ctx)
	e.Read(i, asm.R8, off, size)
	return nil
}

// intArg sets args[i] to the tracepoint's int argument ctx, sign-extended
// by shifts: ISA v4's movsx is not in 6.1.
func intArg(e *ktrace.Emitter, i, ctx int) {
	e.Ctx(asm.R0, ctx)
	e.Emit(asm.LSh.Imm(asm.R0, 32), asm.ArSh.Imm(asm.R0, 32))
	e.SetArg(i, asm.R0)
}

// syscallRet sets R0 to the system call's return value and skips the
// firing where it compares with 0 as skip does.
func syscallRet(e *ktrace.Emitter, skip asm.JumpOp) {
	e.Field(asm.R0, syscallRetOff, 8, true)
	e.Emit(skip.Imm(asm.R0, 0, provider.SkipLabel))
}

// returned is the prologue of a probe at a system call's return
// (syscallRet); with arg, args[0] is the return value. exec-success: an exec that returns 0,
// in the new image. exec-failure: a negative return of execve or
// execveat, which dtrace-utils passes as it is (its tests compare args[0]
// with -ENOENT). signal-clear: rt_sigtimedwait (sigwait, sigtimedwait,
// sigwaitinfo) returned the signal it took.
func returned(skip asm.JumpOp, arg bool) func(e *ktrace.Emitter) error {
	return func(e *ktrace.Emitter) error {
		syscallRet(e, skip)
		if arg {
			e.SetArg(0, asm.R0)
		}
		return nil
	}
}

// exitReason: sched_process_exit(task, group_dead) when the thread group
// dies; args[0] from the task's exit code, as waitpid would decode it.
// Older kernels (6.12 among them) pass the task alone; do_exit has counted the thread
// out of signal->live before the tracepoint, so the group is dead when
// live is 0.
func exitReason(e *ktrace.Emitter) error {
	off, _, err := ktrace.Offset("task_struct", "exit_code")
	if err != nil {
		return err
	}
	if n, err := tracepointArgs("sched_process_exit"); err != nil {
		return err
	} else if n >= 2 {
		e.Ctx(asm.R0, 1)
		e.Emit(asm.And.Imm(asm.R0, 0xff), asm.JEq.Imm(asm.R0, 0, provider.SkipLabel))
	} else {
		offs, err := ktrace.Offsets("task_struct.signal", "signal_struct.live")
		if err != nil {
			return err
		}
		sig, live := offs[0], offs[1]
		e.Ctx(asm.R8, 0)
		e.Read(0, asm.R8, sig, 8)
		e.Emit(asm.LoadMem(asm.R8, asm.R7, e.Arg(0), asm.DWord), asm.JEq.Imm(asm.R8, 0, provider.SkipLabel))
		e.Read(0, asm.R8, live, 4)
		e.Emit(asm.LoadMem(asm.R0, asm.R7, e.Arg(0), asm.Word), asm.JNE.Imm(asm.R0, 0, provider.SkipLabel))
	}
	e.Ctx(asm.R8, 0)
	e.Read(0, asm.R8, off, 4)
	killed, dumped, done := e.Label(), e.Label(), e.Label()
	e.Emit(
		asm.LoadMem(asm.R0, asm.R7, e.Arg(0), asm.Word),
		asm.Mov.Reg(asm.R1, asm.R0),
		asm.And.Imm(asm.R1, 0x7f),
		asm.JNE.Imm(asm.R1, 0, killed),
		asm.Mov.Imm(asm.R2, cldExited),
		asm.Ja.Label(done),
		asm.And.Imm(asm.R0, 0x80).WithSymbol(killed),
		asm.JNE.Imm(asm.R0, 0, dumped),
		asm.Mov.Imm(asm.R2, cldKilled),
		asm.Ja.Label(done),
		asm.Mov.Imm(asm.R2, cldDumped).WithSymbol(dumped),
		asm.StoreMem(asm.R7, e.Arg(0), asm.R2, asm.DWord).WithSymbol(done),
	)
	return nil
}

// started: a fork-like system call returning 0, which it does in the new
// thread; start fires for the main thread of a process (tid == pid),
// lwp-start for every new thread, the main one included.
func started(process bool) func(e *ktrace.Emitter) error {
	return func(e *ktrace.Emitter) error {
		syscallRet(e, asm.JNE)
		e.Emit(asm.FnGetCurrentPidTgid.Call(),
			asm.Mov.Reg(asm.R1, asm.R0), asm.RSh.Imm(asm.R1, 32), asm.Mov.Reg32(asm.R0, asm.R0))
		if process {
			e.Emit(asm.JNE.Reg(asm.R0, asm.R1, provider.SkipLabel))
		}
		return nil
	}
}

// sigGenerated: signal_generate(sig, info, task, group, result).
func sigGenerated(discardOnly bool) func(e *ktrace.Emitter) error {
	return func(e *ktrace.Emitter) error {
		if discardOnly {
			e.Ctx(asm.R0, 4)
			e.Emit(asm.Mov.Reg32(asm.R0, asm.R0), asm.JNE.Imm(asm.R0, signalIgnored, provider.SkipLabel))
		}
		e.CtxArg(0, 2)
		e.CtxArg(1, 2)
		intArg(e, 2, 0)
		return nil
	}
}

// sigDelivered: signal_deliver(sig, info, ka); the handler is
// ka->sa.sa_handler. A signal whose default action kills the process is
// turned into SIGKILL for every thread (complete_signal), which is what
// signal_deliver then sees; the signal sent is in the thread group's
// signal->group_exit_code, which args[0] takes when it holds a signal, as
// in dtrace-utils.
func sigDelivered(e *ktrace.Emitter) error {
	offs, err := ktrace.Offsets("task_struct.signal", "signal_struct.group_exit_code")
	if err != nil {
		return err
	}
	intArg(e, 0, 0)
	keep := e.Label()
	e.Emit(asm.LoadMem(asm.R0, asm.R7, e.Arg(0), asm.DWord), asm.JNE.Imm(asm.R0, sigKill, keep),
		asm.FnGetCurrentTask.Call(), asm.Mov.Reg(asm.R8, asm.R0))
	e.Load(asm.R8, asm.R8, offs[0], 8)
	e.Emit(asm.JEq.Imm(asm.R8, 0, keep))
	e.Load(asm.R0, asm.R8, offs[1], 4)
	// An exit status (exit_group's, status << 8) is no signal.
	e.Emit(asm.JEq.Imm(asm.R0, 0, keep), asm.JGE.Imm(asm.R0, 0x80, keep))
	e.SetArg(0, asm.R0)
	e.Mark(keep)
	e.CtxArg(1, 1)
	return memberArg(e, 2, 2, "k_sigaction", "sa.sa_handler", 8)
}

// tracepointArgs returns the number of arguments a raw tracepoint passes,
// from its btf_trace_NAME type: a pointer to a function whose first
// parameter is the tracepoint's data, not an argument.
func tracepointArgs(name string) (int, error) {
	spec, err := kfeature.KernelSpec()
	if err != nil {
		return 0, fmt.Errorf("tracepoint %s: %w", name, err)
	}
	var td *btf.Typedef
	if err := spec.TypeByName("btf_trace_"+name, &td); err != nil {
		return 0, fmt.Errorf("tracepoint %s: %w", name, err)
	}
	if ptr, ok := btf.UnderlyingType(td).(*btf.Pointer); ok {
		if fp, ok := btf.UnderlyingType(ptr.Target).(*btf.FuncProto); ok && len(fp.Params) > 0 {
			return len(fp.Params) - 1, nil
		}
	}
	return 0, fmt.Errorf("tracepoint %s: btf_trace_%s is not a function pointer", name, name)
}
