// Package dlib is dtrace's D system library: D source files that every
// program sees as if it had written them first. They declare the
// constants D scripts expect (errno.d: EPERM...; signal.d: SIGKILL...;
// regs.d: R_PC... for uregs[]; unistd.d: DTRACEFLT_* for ERROR's arg4),
// the types and translators of Solaris's stable interfaces made from
// the Linux kernel's structures (procfs.d: psinfo_t and curpsinfo,
// lwpsinfo_t and curlwpsinfo; sched.d: cpuinfo_t and cpu; io.d, ip.d,
// tcp.d, udp.d: the argument types of those providers, with inet.d's
// address strings that their translators share; net.d, pcap.d,
// lockstat.d: their constants).
//
// The files keep dtrace's names, so `#pragma D depends_on library
// procfs.d` means what it means to dtrace. They are written for the
// kernel's BTF types of current Linux on x86_64; Load checks them
// against the running kernel and leaves out a file whose kernel lacks
// what it uses, rather than failing every program.
//
// dtrace's -L directories add files of their own: LoadSources with
// append(Sources(), ReadDir(dir)...) orders them by their depends_on
// pragmas and loads them after the system library's.
//
// Use, in the library (dtrace.Handle):
//
//	k := ktypes.Open()
//	lib := dlib.Load(fset, &check.Config{Kernel: k}, k.IsTypeName)
//	pc := &syntax.Config{IsTypeName: lib.IsTypeName, IsIdent: lib.IsIdent}
//	prog, err := pc.Parse(fset, name, src)
//	progs := append(lib.Programs[:len(lib.Programs):len(lib.Programs)], prog)
//	info, err := check.Check(fset, progs, &check.Config{Kernel: k, LibraryPrograms: len(lib.Programs), ...})
package dlib
