// Package syscall is the syscall provider: syscall:vmlinux:NAME:entry and
// syscall:vmlinux:NAME:return for every system call the running kernel
// has a tracepoint for (syscalls:sys_enter_NAME and sys_exit_NAME in
// tracefs), named and ordered as dtrace-utils does.
//
// A probe's program is a TRACEPOINT program on its own system call's
// tracepoint, so a firing never has to be filtered: a clause on one
// system call costs nothing on the others. The record a tracepoint program
// receives is laid out as the event's format file says; the prologue
// copies the fields from there. Detaching such a program waits for an RCU
// grace period, though, one tracepoint after the other: for the probes of
// a description that matches more than WideThreshold of them
// (syscall:::entry), the programs are RAW_TRACEPOINT programs run from
// the raw_syscalls sys_enter and sys_exit tracepoints instead, which
// attach and detach at once: one dispatcher program on each tail-calls
// the probe program stored at the system call's number (from a table,
// amd64 only) in a program array, so untraced system calls stay cheap.
// Their prologue reads the arguments from the saved user registers, and
// Identify finds the probe by the dispatcher's slot.
//
// 32-bit (compat) tasks: the syscalls tracepoints ignore their system
// calls on x86-64; the raw ones see them, with i386 numbers. The
// dispatchers send them to compatBase plus the i386 number, where a wide
// probe is also stored under each i386 number of its name (sysnum32), and
// the prologue reads their 32-bit arguments from bx, cx, dx, si, di and
// bp. SetCompat (dtrace calls it when its -c or -p process is 32-bit)
// makes narrow probes wide too, so that they see them (compat.go).
//
// Arguments, as in DTrace:
//   - entry: arg0..arg5 are the system call's arguments (as many as it
//     takes; the rest are 0), args[] typed as the format file types them.
//   - return: arg0 and arg1 both hold the return value; args[0] and
//     args[1] are longs.
//
// errno: the prologue stores it in the machine state at abi.MStateErrno:
// on return probes -ret when the return value is a negated error number
// (-4095..-1), otherwise 0; on entry probes 0.
package syscall
