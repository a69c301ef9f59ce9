package syntax

// builtinTypes are the type names D defines without any declaration: the
// LP64 typedefs of dtrace's "D" container (dt_open.c). Keywords such as
// int and string are not listed.
var builtinTypes = map[string]bool{
	"int8_t": true, "int16_t": true, "int32_t": true, "int64_t": true,
	"intptr_t": true, "ssize_t": true, "uint8_t": true, "uint16_t": true,
	"uint32_t": true, "uint64_t": true, "uchar_t": true, "ushort_t": true,
	"uint_t": true, "ulong_t": true, "u_longlong_t": true,
	"ptrdiff_t": true, "uintptr_t": true, "size_t": true, "id_t": true,
	"pid_t": true,
}

// IsBuiltinType reports whether name is one of D's predefined typedef
// names (int8_t ... uint64_t, size_t, uintptr_t, ...).
func IsBuiltinType(name string) bool { return builtinTypes[name] }

// builtinIdents are dtrace's predefined global identifiers: variables,
// subroutines, actions and aggregating functions (dt_open.c), and the
// NULL inline. dtrace's lexer takes a known identifier as a variable at
// once; for an unknown one it peeks ahead, which changes the text it
// quotes in syntax errors.
var builtinIdents = map[string]bool{}

func init() {
	for _, name := range []string{
		"alloca", "arg0", "arg1", "arg2", "arg3", "arg4", "arg5", "arg6",
		"arg7", "arg8", "arg9", "args", "avg", "basename", "bcopy",
		"breakpoint", "caller", "chill", "cleanpath", "clear", "commit",
		"copyin", "copyinstr", "copyinto", "copyout", "copyoutstr", "count",
		"curcpu", "curthread", "d_path", "ddi_pathname", "denormalize",
		"dirname", "discard", "epid", "errno", "execname", "exit", "freopen",
		"ftruncate", "func", "getmajor", "getminor", "htonl", "htonll",
		"htons", "gid", "id", "index", "inet_ntoa", "inet_ntoa6",
		"inet_ntop", "ipl", "jstack", "link_ntop", "llquantize", "lltostr",
		"lquantize", "max", "min", "mod", "msgdsize", "msgsize",
		"mutex_owned", "mutex_owner", "mutex_type_adaptive",
		"mutex_type_spin", "ntohl", "ntohll", "ntohs", "normalize", "pcap",
		"pid", "ppid", "printa", "printf", "print", "probefunc", "probemod",
		"probename", "probeprov", "progenyof", "quantize", "raise", "rand",
		"rindex", "rw_iswriter", "rw_read_held", "rw_write_held", "self",
		"setopt", "speculate", "speculation", "stack", "stackdepth",
		"stddev", "stop", "strchr", "strlen", "strjoin", "strrchr",
		"strstr", "strtok", "substr", "sum", "sym", "system", "this", "tid",
		"timestamp", "trace", "tracemem", "trunc", "uaddr", "ucaller",
		"ufunc", "uid", "umod", "uregs", "ustack", "ustackdepth", "usym",
		"vtimestamp", "walltimestamp", "NULL",
	} {
		builtinIdents[name] = true
	}
}
