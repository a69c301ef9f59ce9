// Package symbol turns addresses into names for the output layer and
// names into addresses for the user-level providers.
//
// Kernel symbols come from /proc/kallsyms, read once on first use and kept
// sorted for binary search; symbols of the core kernel belong to the
// module "vmlinux", the others to the module named in brackets, as
// dtrace prints them (vmlinux`schedule+0x12).
//
// User symbols come from the ELF .symtab and .dynsym of each file mapped
// by a process, found through /proc/PID/maps. A Process is a snapshot of
// those mappings, taken early (when a probe or -p/-c names the process) so
// that addresses still resolve after the process has exited. ELF objects
// are parsed lazily and shared between processes that map the same file.
//
// Symbolizer implements format.Symbolizer on top of both.
package symbol
