package check

import (
	"fmt"
	"strings"
)

// LibraryFile is one D library source: D declarations every program may
// use, which dtrace keeps in /usr/lib/dtrace (unistd.d, signal.d, ...).
type LibraryFile struct {
	Name string
	Text string
}

// Library returns the D library of constants for Linux on x86-64: fault
// codes, signals, errno values, uregs[] indexes, address families and pcap
// protocols, and cpuinfo_t (curcpu) with cpu, pset, chip and lgrp. Parse
// each file and pass them to Check before the program, with
// Config.LibraryPrograms set to their number. (Libraries with translators
// over kernel types, procfs.d, io.d, belong with the kernel type support.)
func Library() []LibraryFile {
	return []LibraryFile{
		{"unistd.d", inlines(faults)},
		{"signal.d", inlines(signals)},
		{"errno.d", inlines(errnos)},
		{"regs.d", inlines(regs)},
		{"net.d", inlines(netConsts)},
		{"pcap.d", inlines(pcapConsts)},
		{"sched.d", schedLib},
	}
}

// schedLib defines cpuinfo_t, the type of curcpu, and the inlines on it.
// The layout is dtrace's: four id_t members.
var schedLib = func() string {
	var b strings.Builder
	fields := []struct{ typ, member, inline string }{
		{"processorid_t", "cpu_id", "cpu"},
		{"psetid_t", "cpu_pset", "pset"},
		{"chipid_t", "cpu_chip", "chip"},
		{"lgrp_id_t", "cpu_lgrp", "lgrp"},
	}
	for _, f := range fields {
		fmt.Fprintf(&b, "typedef id_t %s;\n", f.typ)
	}
	b.WriteString("typedef struct cpuinfo {\n")
	for _, f := range fields {
		fmt.Fprintf(&b, "\t%s %s;\n", f.typ, f.member)
	}
	b.WriteString("} cpuinfo_t;\ntypedef cpuinfo_t *cpuinfo_t_p;\n")
	for _, f := range fields {
		fmt.Fprintf(&b, "inline %s %s = curcpu->%s;\n", f.typ, f.inline, f.member)
	}
	return b.String()
}()

// namedConst is a D integer constant; alias names another constant.
type namedConst struct {
	name  string
	value int
	alias string
}

func inlines(list []namedConst) string {
	var b strings.Builder
	for _, c := range list {
		if c.alias != "" {
			fmt.Fprintf(&b, "inline int %s = %s;\n", c.name, c.alias)
		} else {
			fmt.Fprintf(&b, "inline int %s = %d;\n", c.name, c.value)
		}
	}
	return b.String()
}

// faults are the fault codes of the ERROR probe's arg4.
var faults = []namedConst{
	{"DTRACEFLT_UNKNOWN", 0, ""}, {"DTRACEFLT_BADADDR", 1, ""}, {"DTRACEFLT_BADALIGN", 2, ""},
	{"DTRACEFLT_ILLOP", 3, ""}, {"DTRACEFLT_DIVZERO", 4, ""}, {"DTRACEFLT_NOSCRATCH", 5, ""},
	{"DTRACEFLT_KPRIV", 6, ""}, {"DTRACEFLT_UPRIV", 7, ""}, {"DTRACEFLT_TUPOFLOW", 8, ""},
	{"DTRACEFLT_BADSTACK", 9, ""},
}

// signals are Linux's signal numbers.
var signals = []namedConst{
	{"SIGHUP", 1, ""}, {"SIGINT", 2, ""}, {"SIGQUIT", 3, ""}, {"SIGILL", 4, ""},
	{"SIGTRAP", 5, ""}, {"SIGABRT", 6, ""}, {"SIGIOT", 6, ""}, {"SIGBUS", 7, ""},
	{"SIGFPE", 8, ""}, {"SIGKILL", 9, ""}, {"SIGUSR1", 10, ""}, {"SIGSEGV", 11, ""},
	{"SIGUSR2", 12, ""}, {"SIGPIPE", 13, ""}, {"SIGALRM", 14, ""}, {"SIGTERM", 15, ""},
	{"SIGSTKFLT", 16, ""}, {"SIGCHLD", 17, ""}, {"SIGCLD", 17, ""}, {"SIGCONT", 18, ""},
	{"SIGSTOP", 19, ""}, {"SIGTSTP", 20, ""}, {"SIGTTIN", 21, ""}, {"SIGTTOU", 22, ""},
	{"SIGURG", 23, ""}, {"SIGXCPU", 24, ""}, {"SIGXFSZ", 25, ""}, {"SIGVTALRM", 26, ""},
	{"SIGPROF", 27, ""}, {"SIGWINCH", 28, ""}, {"SIGIO", 29, ""}, {"SIGPOLL", 29, ""},
	{"SIGPWR", 30, ""}, {"SIGSYS", 31, ""}, {"SIGRTMIN", 32, ""}, {"SIGRTMAX", 64, ""},
}

// errnos are Linux's errno values (asm-generic).
var errnos = func() []namedConst {
	names := []string{"", "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG",
		"ENOEXEC", "EBADF", "ECHILD", "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK",
		"EBUSY", "EEXIST", "EXDEV", "ENODEV", "ENOTDIR", "EISDIR", "EINVAL", "ENFILE",
		"EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC", "ESPIPE", "EROFS", "EMLINK",
		"EPIPE", "EDOM", "ERANGE", "EDEADLK", "ENAMETOOLONG", "ENOLCK", "ENOSYS",
		"ENOTEMPTY", "ELOOP", "", "ENOMSG", "EIDRM", "ECHRNG", "EL2NSYNC", "EL3HLT",
		"EL3RST", "ELNRNG", "EUNATCH", "ENOCSI", "EL2HLT", "EBADE", "EBADR", "EXFULL",
		"ENOANO", "EBADRQC", "EBADSLT", "", "EBFONT", "ENOSTR", "ENODATA", "ETIME",
		"ENOSR", "ENONET", "ENOPKG", "EREMOTE", "ENOLINK", "EADV", "ESRMNT", "ECOMM",
		"EPROTO", "EMULTIHOP", "EDOTDOT", "EBADMSG", "EOVERFLOW", "ENOTUNIQ", "EBADFD",
		"EREMCHG", "ELIBACC", "ELIBBAD", "ELIBSCN", "ELIBMAX", "ELIBEXEC", "EILSEQ",
		"ERESTART", "ESTRPIPE", "EUSERS", "ENOTSOCK", "EDESTADDRREQ", "EMSGSIZE",
		"EPROTOTYPE", "ENOPROTOOPT", "EPROTONOSUPPORT", "ESOCKTNOSUPPORT", "EOPNOTSUPP",
		"EPFNOSUPPORT", "EAFNOSUPPORT", "EADDRINUSE", "EADDRNOTAVAIL", "ENETDOWN",
		"ENETUNREACH", "ENETRESET", "ECONNABORTED", "ECONNRESET", "ENOBUFS", "EISCONN",
		"ENOTCONN", "ESHUTDOWN", "ETOOMANYREFS", "ETIMEDOUT", "ECONNREFUSED", "EHOSTDOWN",
		"EHOSTUNREACH", "EALREADY", "EINPROGRESS", "ESTALE", "EUCLEAN", "ENOTNAM",
		"ENAVAIL", "EISNAM", "EREMOTEIO", "EDQUOT", "ENOMEDIUM", "EMEDIUMTYPE",
		"ECANCELED", "ENOKEY", "EKEYEXPIRED", "EKEYREVOKED", "EKEYREJECTED",
		"EOWNERDEAD", "ENOTRECOVERABLE", "ERFKILL", "EHWPOISON"}
	var l []namedConst
	for v, n := range names {
		if n != "" {
			l = append(l, namedConst{n, v, ""})
		}
	}
	return append(l, namedConst{"EWOULDBLOCK", 0, "EAGAIN"}, namedConst{"EDEADLOCK", 0, "EDEADLK"},
		namedConst{"ENOTSUP", 0, "EOPNOTSUPP"})
}()

// regs are the uregs[] indexes on x86-64 (the order of struct pt_regs),
// with the i386 and generic names as aliases.
var regs = []namedConst{
	{"R_R15", 0, ""}, {"R_R14", 1, ""}, {"R_R13", 2, ""}, {"R_R12", 3, ""},
	{"R_RBP", 4, ""}, {"R_RBX", 5, ""}, {"R_R11", 6, ""}, {"R_R10", 7, ""},
	{"R_R9", 8, ""}, {"R_R8", 9, ""}, {"R_RAX", 10, ""}, {"R_RCX", 11, ""},
	{"R_RDX", 12, ""}, {"R_RSI", 13, ""}, {"R_RDI", 14, ""}, {"R_ERR", 15, ""},
	{"R_RIP", 16, ""}, {"R_CS", 17, ""}, {"R_RFL", 18, ""}, {"R_RSP", 19, ""},
	{"R_SS", 20, ""}, {"R_DS", 21, ""}, {"R_ES", 22, ""}, {"R_FS", 23, ""},
	{"R_GS", 24, ""}, {"R_TRAPNO", 25, ""},
	{"R_EBX", 0, "R_RBX"}, {"R_ECX", 0, "R_RCX"}, {"R_EDX", 0, "R_RDX"},
	{"R_ESI", 0, "R_RSI"}, {"R_EDI", 0, "R_RDI"}, {"R_EBP", 0, "R_RBP"},
	{"R_EAX", 0, "R_RAX"}, {"R_EIP", 0, "R_RIP"}, {"R_EFL", 0, "R_RFL"},
	{"R_ESP", 0, "R_RSP"}, {"R_PC", 0, "R_EIP"}, {"R_FP", 0, "R_EBP"},
	{"R_SP", 0, "R_ESP"}, {"R_PS", 0, "R_EFL"}, {"R_R0", 0, "R_EAX"}, {"R_R1", 0, "R_EBX"},
}

// netConsts are the address families and link types net.d defines.
var netConsts = []namedConst{
	{"AF_INET", 2, ""}, {"AF_INET6", 10, ""},
	{"ARPHRD_ETHER", 1, ""}, {"ARPHRD_INFINIBAND", 32, ""},
	{"NET_PROBE_OUTBOUND", 0, ""}, {"NET_PROBE_INBOUND", 1, ""},
}

// pcapConsts are the link types of the pcap() action.
var pcapConsts = []namedConst{
	{"PCAP_NULL", 0, ""}, {"PCAP_ETHER", 1, ""}, {"PCAP_PPP", 9, ""},
	{"PCAP_IP", 12, ""}, {"PCAP_WIFI", 105, ""}, {"PCAP_IPOIB", 242, ""},
}
