package check

import (
	"strconv"
	"strings"

	"github.com/dtrace-go/dtrace/dlang/types"
)

// builtinVars lists D's builtin variables with their types as dtrace
// declares them (dt_open.c); kernel types are written "vmlinux`T".
var builtinVars = []struct{ name, typ string }{
	{"arg0", "int64_t"}, {"arg1", "int64_t"}, {"arg2", "int64_t"}, {"arg3", "int64_t"},
	{"arg4", "int64_t"}, {"arg5", "int64_t"}, {"arg6", "int64_t"}, {"arg7", "int64_t"},
	{"arg8", "int64_t"}, {"arg9", "int64_t"},
	{"args", ""}, {"uregs", ""},
	{"caller", "uintptr_t"},
	{"curcpu", "cpuinfo_t *"},
	{"curthread", "vmlinux`struct task_struct *"},
	{"epid", "uint64_t"},
	{"errno", "int"},
	{"execname", "string"},
	{"gid", "gid_t"},
	{"id", "uint_t"},
	{"ipl", "uint_t"},
	{"pid", "pid_t"},
	{"ppid", "pid_t"},
	{"probefunc", "string"},
	{"probemod", "string"},
	{"probename", "string"},
	{"probeprov", "string"},
	{"stackdepth", "uint32_t"},
	{"tid", "id_t"},
	{"timestamp", "uint64_t"},
	{"ucaller", "uint64_t"},
	{"uid", "uid_t"},
	{"ustackdepth", "uint32_t"},
	{"vtimestamp", "uint64_t"},
	{"walltimestamp", "int64_t"},
}

// actKind classifies actions for the clause rules on speculations
// (dtrace's DTRACEACT_* classes).
type actKind int

const (
	actNone     actKind = iota // subroutines and aggregating functions
	actData                    // data-recording
	actExit                    // exit()
	actDestruct                // destructive
	actSpeculate
	actCommit
	actDiscard
)

// builtinFuncs lists D's subroutines (kind Subroutine), actions (Action)
// and aggregating functions (AggFunc) with their prototypes. In a
// prototype "@" accepts any type, "[T]" is optional and "..." variadic.
var builtinFuncs = []struct {
	name  string
	kind  FuncKind
	act   actKind
	proto string
}{
	{"alloca", Subroutine, actNone, "void *(size_t)"},
	{"avg", AggFunc, actNone, "void(@)"},
	{"basename", Subroutine, actNone, "string(const char *)"},
	{"bcopy", Subroutine, actNone, "void(void *, void *, size_t)"},
	{"breakpoint", Action, actDestruct, "void()"},
	{"chill", Action, actDestruct, "void(int)"},
	{"cleanpath", Subroutine, actNone, "string(const char *)"},
	{"clear", Action, actData, "void(@)"},
	{"commit", Action, actCommit, "void(int)"},
	{"copyin", Subroutine, actNone, "void *(uintptr_t, size_t)"},
	{"copyinstr", Subroutine, actNone, "string(uintptr_t, [size_t])"},
	{"copyinto", Subroutine, actNone, "void(uintptr_t, size_t, void *)"},
	{"copyout", Subroutine, actDestruct, "void(void *, uintptr_t, size_t)"},
	{"copyoutstr", Subroutine, actDestruct, "void(char *, uintptr_t, size_t)"},
	{"count", AggFunc, actNone, "void()"},
	{"d_path", Subroutine, actNone, "string(vmlinux`struct path *)"},
	{"ddi_pathname", Subroutine, actNone, "string(void *, int64_t)"},
	{"denormalize", Action, actData, "void(@)"},
	{"dirname", Subroutine, actNone, "string(const char *)"},
	{"discard", Action, actDiscard, "void(int)"},
	{"exit", Action, actExit, "void(int)"},
	{"freopen", Action, actDestruct, "void(@, ...)"},
	{"ftruncate", Action, actData, "void()"},
	{"func", Action, actData, "_symaddr(uintptr_t)"},
	{"getmajor", Subroutine, actNone, "vmlinux`dev_t(vmlinux`dev_t)"},
	{"getminor", Subroutine, actNone, "vmlinux`dev_t(vmlinux`dev_t)"},
	{"htonl", Subroutine, actNone, "uint32_t(uint32_t)"},
	{"htonll", Subroutine, actNone, "uint64_t(uint64_t)"},
	{"htons", Subroutine, actNone, "uint16_t(uint16_t)"},
	{"index", Subroutine, actNone, "int(const char *, const char *, [int])"},
	{"inet_ntoa", Subroutine, actNone, "string(ipaddr_t *)"},
	{"inet_ntoa6", Subroutine, actNone, "string(vmlinux`struct in6_addr *, [int])"},
	{"inet_ntop", Subroutine, actNone, "string(int, void *)"},
	{"jstack", Action, actData, "stack([uint32_t], [uint32_t])"},
	{"link_ntop", Subroutine, actNone, "string(int, void *)"},
	{"llquantize", AggFunc, actNone, "void(@, int32_t, int32_t, int32_t, int32_t, ...)"},
	{"lltostr", Subroutine, actNone, "string(int64_t)"},
	{"lquantize", AggFunc, actNone, "void(@, int32_t, int32_t, ...)"},
	{"max", AggFunc, actNone, "void(@)"},
	{"min", AggFunc, actNone, "void(@)"},
	{"mod", Action, actData, "_symaddr(uintptr_t)"},
	{"msgdsize", Subroutine, actNone, "size_t(mblk_t *)"},
	{"msgsize", Subroutine, actNone, "size_t(mblk_t *)"},
	{"mutex_owned", Subroutine, actNone, "int(vmlinux`struct mutex *)"},
	{"mutex_owner", Subroutine, actNone, "vmlinux`struct task_struct *(vmlinux`struct mutex *)"},
	{"mutex_type_adaptive", Subroutine, actNone, "int(vmlinux`struct mutex *)"},
	{"mutex_type_spin", Subroutine, actNone, "int(vmlinux`struct mutex *)"},
	{"ntohl", Subroutine, actNone, "uint32_t(uint32_t)"},
	{"ntohll", Subroutine, actNone, "uint64_t(uint64_t)"},
	{"ntohs", Subroutine, actNone, "uint16_t(uint16_t)"},
	{"normalize", Action, actData, "void(@, uint64_t)"},
	{"panic", Action, actDestruct, "void()"},
	{"pcap", Action, actData, "void(void *, int)"},
	{"printa", Action, actData, "void(@, ...)"},
	{"printf", Action, actData, "void(string, ...)"},
	{"print", Action, actData, "void(void *)"},
	{"progenyof", Subroutine, actNone, "int(pid_t)"},
	{"quantize", AggFunc, actNone, "void(@, ...)"},
	{"raise", Action, actDestruct, "void(int)"},
	{"rand", Subroutine, actNone, "int()"},
	{"rindex", Subroutine, actNone, "int(const char *, const char *, [int])"},
	{"rw_iswriter", Subroutine, actNone, "int(vmlinux`rwlock_t *)"},
	{"rw_read_held", Subroutine, actNone, "int(vmlinux`rwlock_t *)"},
	{"rw_write_held", Subroutine, actNone, "int(vmlinux`rwlock_t *)"},
	{"setopt", Action, actData, "void(const char *, [const char *])"},
	{"speculate", Action, actSpeculate, "void(int)"},
	{"speculation", Subroutine, actNone, "int()"},
	{"stack", Action, actData, "stack([uint32_t])"},
	{"stddev", AggFunc, actNone, "void(@)"},
	{"stop", Action, actDestruct, "void()"},
	{"strchr", Subroutine, actNone, "string(const char *, char)"},
	{"strlen", Subroutine, actNone, "size_t(const char *)"},
	{"strjoin", Subroutine, actNone, "string(const char *, const char *)"},
	{"strrchr", Subroutine, actNone, "string(const char *, char)"},
	{"strstr", Subroutine, actNone, "string(const char *, const char *)"},
	{"strtok", Subroutine, actNone, "string(const char *, const char *)"},
	{"substr", Subroutine, actNone, "string(const char *, int, [int])"},
	{"sum", AggFunc, actNone, "void(@)"},
	{"sym", Action, actData, "_symaddr(uintptr_t)"},
	{"system", Action, actDestruct, "void(@, ...)"},
	{"trace", Action, actData, "void(@)"},
	{"tracemem", Action, actData, "void(@, size_t, [size_t])"},
	{"trunc", Action, actData, "void(@, [int64_t])"},
	{"uaddr", Action, actData, "_usymaddr(uintptr_t)"},
	{"ufunc", Action, actData, "_usymaddr(uintptr_t)"},
	{"umod", Action, actData, "_usymaddr(uintptr_t)"},
	{"ustack", Action, actData, "stack([uint32_t], [uint32_t])"},
	{"usym", Action, actData, "_usymaddr(uintptr_t)"},
}

// sig is a parsed prototype.
type sig struct {
	result   types.Type
	params   []types.Type // nil entry: "@", any type
	names    []string     // parameter types as written, for messages
	optional int          // index of the first optional parameter, -1 if none
	variadic bool
}

// funcInfo is the checker's view of a builtin function.
type funcInfo struct {
	fn  *Func
	act actKind
	sig *sig
	// lazy marks a prototype naming kernel types, parsed again with
	// them when the function is first called (see resolve).
	lazy bool
}

// resolve parses a lazy prototype with the kernel's types.
func (c *checker) resolve(fi *funcInfo) *funcInfo {
	if fi != nil && fi.lazy {
		fi.lazy = false
		fi.sig = c.parseProto(fi.fn.Proto)
		fi.fn.Result = fi.sig.result
	}
	return fi
}

// hasOpaque reports whether a prototype names a type that was not found.
func (s *sig) hasOpaque() bool {
	if isOpaque(s.result) {
		return true
	}
	for _, p := range s.params {
		if p != nil && isOpaque(p) {
			return true
		}
	}
	return false
}

// localParseProto parses a prototype without the kernel's types.
func (c *checker) localParseProto(p string) *sig {
	k := c.conf.Kernel
	c.conf.Kernel = nil
	defer func() { c.conf.Kernel = k }()
	return c.parseProto(p)
}

// parseProto parses a prototype like "string(const char *, int, [int])".
func (c *checker) parseProto(p string) *sig {
	open := strings.Index(p, "(")
	s := &sig{result: c.protoType(strings.TrimSpace(p[:open])), optional: -1}
	args := strings.TrimSuffix(p[open+1:], ")")
	if args == "" {
		return s
	}
	for _, a := range strings.Split(args, ",") {
		a = strings.TrimSpace(a)
		switch {
		case a == "...":
			s.variadic = true
			continue
		case strings.HasPrefix(a, "["):
			a = strings.Trim(a, "[]")
			if s.optional < 0 {
				s.optional = len(s.params)
			}
		}
		var t types.Type
		if a != "@" {
			t = c.protoType(a)
		}
		s.params = append(s.params, t)
		s.names = append(s.names, a)
	}
	return s
}

// protoType resolves a type written in a prototype or builtin table.
func (c *checker) protoType(s string) types.Type {
	stars := 0
	for strings.HasSuffix(s, "*") {
		s = strings.TrimSpace(s[:len(s)-1])
		stars++
	}
	// dtrace prints prototypes without qualifiers ("char *").
	s = strings.TrimPrefix(s, "const ")
	var t types.Type
	if m, name, ok := strings.Cut(s, "`"); ok && m == "vmlinux" {
		t = c.kernelType(name)
	} else if t = c.lookupType("", s); t == nil {
		t = c.kernelType(s)
	}
	for ; stars > 0; stars-- {
		t = types.NewPointer(t)
	}
	return t
}

// initBuiltins fills the builtin variable and function tables.
// localProtoType resolves a builtin's type without the kernel's types:
// those that need them (curthread's task_struct) stay opaque and are
// looked up when the builtin is used, as reading the kernel's BTF costs
// more than most programs' whole compilation.
func (c *checker) localProtoType(s string) types.Type {
	k := c.conf.Kernel
	c.conf.Kernel = nil
	defer func() { c.conf.Kernel = k }()
	return c.protoType(s)
}

func (c *checker) initBuiltins() {
	c.builtins = map[string]*Builtin{}
	for _, b := range builtinVars {
		v := &Builtin{Name: b.name}
		if b.typ == "" {
			v.Array = true
			v.Type = types.Int64
			if b.name == "uregs" {
				v.Type = types.Uint64
			}
		} else {
			v.Type = c.localProtoType(b.typ)
			if isOpaque(v.Type) {
				// Defined by a D library (cpuinfo_t) or the kernel:
				// resolved again when used.
				c.lateTypes[v] = b.typ
			}
		}
		c.builtins[b.name] = v
	}
	c.funcs = map[string]*funcInfo{}
	for _, f := range builtinFuncs {
		s := c.localParseProto(f.proto)
		c.funcs[f.name] = &funcInfo{
			fn:   &Func{Name: f.name, Kind: f.kind, Proto: f.proto, Result: s.result, Destructive: f.act == actDestruct},
			act:  f.act,
			sig:  s,
			lazy: s.hasOpaque(),
		}
	}
}

// version encodes a D version as dtrace does (__SUNW_D_VERSION).
func version(major, minor, micro uint32) uint32 {
	return major<<24 | minor<<12 | micro
}

// ParseVersion parses a D version, "M.m" or "M.m.u", into the encoding of
// Config.Version.
func ParseVersion(s string) (uint32, bool) {
	parts := strings.Split(s, ".")
	if len(parts) < 1 || len(parts) > 3 {
		return 0, false
	}
	var n [3]uint32
	limits := [3]uint64{0xff, 0xfff, 0xfff}
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil || v > limits[i] {
			return 0, false
		}
		n[i] = uint32(v)
	}
	return version(n[0], n[1], n[2]), true
}

// builtinVersions gives the D version that introduced each builtin
// variable and function newer than D 1.0 (dtrace binds the others to 1.0).
var builtinVersions = map[string]uint32{
	"freopen": version(1, 1, 0), "index": version(1, 1, 0), "rindex": version(1, 1, 0),
	"strchr": version(1, 1, 0), "strrchr": version(1, 1, 0), "strstr": version(1, 1, 0),
	"strtok": version(1, 1, 0), "substr": version(1, 1, 0),
	"func": version(1, 2, 0), "mod": version(1, 2, 0), "setopt": version(1, 2, 0),
	"sym": version(1, 2, 0), "uaddr": version(1, 2, 0), "ucaller": version(1, 2, 0),
	"ufunc": version(1, 2, 0), "umod": version(1, 2, 0), "ustackdepth": version(1, 2, 0),
	"usym":  version(1, 2, 0),
	"htonl": version(1, 3, 0), "htonll": version(1, 3, 0), "htons": version(1, 3, 0),
	"ntohl": version(1, 3, 0), "ntohll": version(1, 3, 0), "ntohs": version(1, 3, 0),
	"inet_ntoa": version(1, 5, 0), "inet_ntoa6": version(1, 5, 0), "inet_ntop": version(1, 5, 0),
	"link_ntop":  version(1, 5, 0),
	"stddev":     version(1, 6, 0),
	"llquantize": version(1, 6, 4), "pcap": version(1, 6, 4),
	"print": version(2, 0, 0),
}

// reduceVersion makes the builtins introduced after version v unknown, as
// dtrace's version option does (0: no change). Like dtrace's, the
// reduction cannot be undone.
func (c *checker) reduceVersion(v uint32) {
	if v == 0 {
		return
	}
	for name, since := range builtinVersions {
		if since > v {
			delete(c.builtins, name)
			delete(c.funcs, name)
		}
	}
}
