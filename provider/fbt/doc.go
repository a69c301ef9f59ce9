// Package fbt is the function boundary tracing provider:
// fbt:MODULE:FUNCTION:entry and fbt:MODULE:FUNCTION:return for every
// kernel function the kernel's function tracer can trace (tracefs
// available_filter_functions), MODULE being the loadable module that holds
// the function or "vmlinux" for the core kernel, as dtrace-utils names it.
//
// A probe runs where the kernel offers it: an fentry/fexit program
// (BPF_PROG_TYPE_TRACING on the function's BTF id; its context is the
// function's arguments, then on fexit its return value) when the function
// has BTF with at most six scalar or pointer arguments, and a
// kprobe/kretprobe program (context: the saved registers) otherwise. The
// user sees the same probes and arguments either way. Every attachment is
// a BPF link, so a killed dtrace leaves nothing behind.
//
// Arguments, as dtrace-utils gives them on Linux:
//   - entry: arg0..argN are the function's arguments; args[] are typed
//     from the function's BTF prototype.
//   - return: arg0 is -1 (dtrace-utils has no return offset on Linux) and
//     arg1 the return value (widened as its type says); args[0] is an int
//     and args[1] has the function's return type (none for a void
//     function).
//
// A description matching more than WideThreshold probes shares one program
// per side and prologue among them, attached by one kprobe.multi link where
// the kernel has it (CONFIG_FPROBE: 6.12, not Debian's 6.1), by addresses
// where some function is in a module or shares its name with other static
// functions (every copy is attached); docs/FBT.md says what it costs.
//
// The environment variable DTRACE_FBT=kprobe makes every probe a kprobe
// (for comparisons and tests of the kprobe path).
package fbt
