// Package pid is DTrace's pid provider: probes on the functions of a
// process's executable and libraries, made on demand when a description
// names a process (pid$target, pid1234).
//
// Probes are named pidPID:MODULE:FUNCTION:NAME, where MODULE is the base
// name of the mapped file (the description may also say a.out for the
// executable, the library's soname, or the name up to one of its dots:
// libc or libc.so for libc.so.6) and NAME is entry, return or a
// hexadecimal instruction offset into the function. Every field may hold
// globs; a glob in NAME makes entry and return probes and one probe per
// instruction (found by decoding the function; instructions the kernel
// cannot probe, or would emulate wrongly (Misemulated), are then left
// out). Aliases at one address (a weak symbol
// and its target) make one probe, named as dtrace's lookup by address
// names it: a global or weak symbol before a local one, then the name
// with fewer leading underscores.
//
// entry (and offset) probes see the arguments of the x86-64 calling
// convention: arg0-arg5 from rdi, rsi, rdx, rcx, r8, r9 and arg6-arg9
// from the caller's stack. return probes are, as in illumos, uprobes on
// the instructions that leave the function: its rets and its tail calls
// (direct jumps out of it, conditional ones included, which fire only
// when the flags say the jump is taken; see Returns). arg0 is the offset
// of that instruction in the function (from the attach cookie) and arg1
// rax, the return value (at a tail call, whatever rax holds). A function whose
// instructions cannot be decoded or that has no such instruction (and
// every function on arm64) gets a uretprobe instead, where arg0 is 0 as
// in DTrace on Linux.
//
// Each probe is a uprobe (or uretprobe) on the file's inode, opened with
// the process as perf-event target so that the kernel fires it only in
// that process; the prologue checks the process id again, so a firing is
// never credited to another process.
//
// LinkMapWatcher follows the objects a process loads and unloads after
// tracing starts (a uprobe on the dynamic linker's _dl_debug_state), so
// that the library re-matches descriptions against them (docs/USDT.md).
package pid
