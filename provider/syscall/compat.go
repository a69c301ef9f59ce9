package syscall

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/provider"
)

// The x86-64 kernel's syscalls:sys_enter_NAME and sys_exit_NAME events
// ignore the system calls of 32-bit (compat) tasks
// (ARCH_TRACE_IGNORE_COMPAT_SYSCALLS): a probe on its own tracepoint never
// sees them. A wide probe does: the dispatchers on the raw sys_enter and
// sys_exit tracepoints, which see every system call, index their program
// array by the system call number, or by compatBase plus the i386 number
// when the task is in a compat system call (thread_info.status has
// TS_COMPAT), where the probes of the system calls that have one are
// stored too (sysnums32).
//
// Running every syscall probe wide costs every system call of the machine
// a raw tracepoint program (bench/README.md: some 100 ns), which a
// description of one or two system calls avoids by its own tracepoint.
// So a narrow probe becomes wide, and sees 32-bit tasks, only when
// SetCompat asked for it: dtrace does when its -c or -p process is a
// 32-bit executable.

// compatBase is where the compat system calls' slots begin in a
// dispatcher's program array, and what Identify adds to the number of a
// compat system call.
const compatBase = 1024

// SetCompat makes every probe of a system call with both a native and an
// i386 number wide from now on, so that it also fires for 32-bit tasks.
// Call it before the probes are matched.
func (pv *Provider) SetCompat(on bool) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	pv.compat = on
}

// SetMemberOffset gives the provider the way to find a member's offset in
// a kernel struct (from the kernel's BTF); without it, or where it fails,
// thread_info.status is taken to be where it is from 5.11 to 6.18 (16).
func (pv *Provider) SetMemberOffset(f func(structName, member string) (uint32, error)) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	pv.memberOffset = f
}

// taskStatus tells where thread_info.status is from the task_struct, in
// which x86 embeds its thread_info; btf says that the kernel's BTF gave
// the offset, so that a program may load it directly from
// bpf_get_current_task_btf's task.
type taskStatus struct {
	off int32
	btf bool
}

// statusOffset finds thread_info.status, once.
func (pv *Provider) statusOffset() taskStatus {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if pv.status.off != 0 {
		return pv.status
	}
	pv.status = taskStatus{off: 16}
	if mo := pv.memberOffset; mo != nil {
		ti, err1 := mo("task_struct", "thread_info")
		st, err2 := mo("thread_info", "status")
		if err1 == nil && err2 == nil && ti+st < 0x7fff {
			pv.status = taskStatus{off: int32(ti + st), btf: true}
		}
	}
	return pv.status
}

// compatFlag leaves in dst (R8 or R9: the helper calls clobber R0-R5) 1
// when the current task is in a compat system call, 0 otherwise. With
// BTF it loads thread_info.status from bpf_get_current_task_btf's task (a
// BTF pointer: the load cannot fault); otherwise it reads it into the
// u64 at base+tmp (zeroed first: a failed read leaves 0, native).
func compatFlag(dst, base asm.Register, tmp int16, status taskStatus) asm.Instructions {
	if status.btf {
		return asm.Instructions{
			asm.FnGetCurrentTaskBtf.Call(),
			asm.LoadMem(dst, asm.R0, int16(status.off), asm.Word),
			asm.And.Imm(dst, tsCompat),
			asm.RSh.Imm(dst, tsCompatShift),
		}
	}
	statusOff := status.off
	return asm.Instructions{
		provider.StoreImmDW(base, tmp, 0),
		asm.FnGetCurrentTask.Call(),
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.Add.Imm(asm.R3, statusOff),
		asm.Mov.Reg(asm.R1, base),
		asm.Add.Imm(asm.R1, int32(tmp)),
		asm.Mov.Imm(asm.R2, 4),
		asm.FnProbeReadKernel.Call(),
		asm.LoadMem(dst, base, tmp, asm.Word),
		asm.And.Imm(dst, tsCompat),
		asm.RSh.Imm(dst, tsCompatShift),
	}
}
