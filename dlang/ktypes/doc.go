// Package ktypes gives the D checker the running kernel's types and
// symbols: BTF types converted to dlang/types values, scoped as D scopes
// them (module "vmlinux" for the kernel, a module's name for its own
// BTF), and kernel symbols from /proc/kallsyms.
//
// Use:
//
//	k := ktypes.Open()                 // reads nothing yet
//	conf := &check.Config{Kernel: k}   // struct task_struct, pid_t, `schedule
//	pc := &syntax.Config{IsTypeName: k.IsTypeName}
//
// Start-up time matters to dtrace, so everything is lazy: the kernel's
// BTF is read on the first type lookup, a type is converted when a
// program names it, together with everything it reaches, and
// /proc/kallsyms is read on the first symbol lookup and searched per
// name. BenchmarkStartup measures the usual cost, the BTF and struct
// task_struct (some 6,000 types): about 45ms, most of it cilium/ebpf
// decoding BTF. Reading /proc/kallsyms costs about 50ms of kernel time on
// a kernel with 120,000 symbols.
//
// A symbol's type is its variable's type in BTF, which describes only
// per-CPU variables; a function is a uintptr_t, as dtrace has it; other
// data has no type here (Symbol.Type nil), and the checker takes it from
// an extern declaration, the program's or the D library's (dlib's
// kvars.d: `max_pfn, `nr_cpu_ids, `linux_banner, ...). Lookups prefer a
// global symbol to a local (static) one of the same name and say which
// they found (Symbol.Local): a bare D identifier may not name a local
// one. Kernels built without CONFIG_KALLSYMS_ALL list only functions in
// /proc/kallsyms, so their variables are not found.
//
// Open reads the running kernel on Linux and nothing elsewhere; New
// takes any Source, which is how tests build small kernels.
package ktypes
