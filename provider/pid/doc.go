// Package pid is DTrace's pid provider: probes on the functions of a
// process's executable and libraries, made on demand when a description
// names a process (pid$target, pid1234).
//
// Probes are named pidPID:MODULE:FUNCTION:NAME, where MODULE is the base
// name of the mapped file (the description may also say a.out for the
// executable, the library's soname, or the name up to its first dot:
// libc for libc.so.6) and NAME is entry, return or a hexadecimal
// instruction offset into the function. Every field may hold globs; a
// glob in NAME makes entry and return probes only, as finding instruction
// boundaries on x86 takes a disassembler (name an offset exactly to probe
// it; it must be an instruction boundary, which is not checked).
//
// entry (and offset) probes see the arguments of the x86-64 calling
// convention: arg0-arg5 from rdi, rsi, rdx, rcx, r8, r9 and arg6-arg9
// from the caller's stack. return probes are uretprobes: arg1 is the
// return value (rax) and arg0, the offset of the returning instruction in
// illumos, is 0 because a uretprobe does not know it (as in DTrace on
// Linux).
//
// Each probe is a uprobe (or uretprobe) on the file's inode, opened with
// the process as perf-event target so that the kernel fires it only in
// that process; the prologue checks the process id again, so a firing is
// never credited to another process.
package pid
