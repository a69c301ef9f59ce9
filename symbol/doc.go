// Package symbol turns addresses into names for the output layer and
// names into addresses for the user-level providers.
//
// Kernel symbols come from /proc/kallsyms, read once on first use and kept
// sorted for binary search; symbols of the core kernel belong to the
// module "vmlinux", the others to the module named in brackets, as
// dtrace prints them (vmlinux`schedule+0x12).
//
// User symbols come from the ELF symbol tables of each file mapped by a
// process, found through /proc/PID/maps: its .symtab, or for a stripped
// file its separate debug file (by build id, .gnu_debuglink, or fetched
// from debuginfod servers), or its MiniDebugInfo (.gnu_debugdata), and
// its .dynsym; code a JIT generated is named from the process's
// /tmp/perf-PID.map, and the vdso from the tracer's own copy. An address
// is named only inside a function. docs/STACKS.md ("Names") gives the
// rules and the search order. A Process is a snapshot of
// those mappings, taken early (when a probe or -p/-c names the process)
// and renewed while the process lives, so that addresses still resolve
// after it has exited. ELF objects are parsed lazily, once per file
// (device and inode), and shared between the processes that map it.
//
// Reading /proc/kallsyms costs about 130 ms, nearly all of it in the
// kernel, so it happens on the first kernel address only; a lookup then
// costs well under a microsecond, kernel or user.
//
// Symbolizer implements format.Symbolizer on top of both.
package symbol
