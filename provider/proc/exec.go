package proc

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/ktrace"
)

// proc:::exec fires as execve or execveat starts, before the kernel has
// looked at the file, so that an exec that fails (no such file, a bad
// interpreter) fires exec and then exec-failure, as in dtrace-utils. Its
// args[0], the path, is a string in the caller's memory; the clauses read
// strings from kernel memory, so the prologue copies it into this
// thread's entry of dt_proc_exec and passes that.
const execMap = "dt_proc_exec"

// execPathSize is the size of a copied path, the default strsize: a
// longer path is cut there.
const execPathSize = 256

// The offsets of the path in the syscalls:sys_enter_execve and
// sys_enter_execveat records, and the cookies that tell them apart.
const (
	execveFilename   = 16
	execveatFilename = 24
	cookieExecve     = 1
	cookieExecveat   = 2
)

func execEntries() []ktrace.Source {
	return []ktrace.Source{
		{Group: "syscalls", Name: "sys_enter_execve", Cookie: cookieExecve},
		{Group: "syscalls", Name: "sys_enter_execveat", Cookie: cookieExecveat},
	}
}

func execMaps() []provider.HashMap {
	return []provider.HashMap{{Name: execMap, KeySize: 4, ValueSize: execPathSize, MaxEntries: 1024}}
}

// execPath: R8 the user address of the path; the thread's entry of
// dt_proc_exec (made from scratch bytes, then overwritten) receives it.
func execPath(e *ktrace.Emitter) error {
	at, have := e.Label(), e.Label()
	e.Cookie()
	e.Emit(asm.JEq.Imm(asm.R0, cookieExecveat, at))
	e.Field(asm.R8, execveFilename, 8, false)
	e.Emit(asm.Ja.Label(have))
	e.Mark(at)
	e.Field(asm.R8, execveatFilename, 8, false)
	e.Mark(have)
	e.ThreadEntry(execMap, true)
	e.SetArg(0, asm.R0)
	e.Emit(
		asm.Mov.Reg(asm.R1, asm.R0),
		asm.Mov.Imm(asm.R2, execPathSize),
		asm.Mov.Reg(asm.R3, asm.R8),
		asm.FnProbeReadUserStr.Call(),
	)
	return nil
}
