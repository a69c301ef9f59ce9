package check

import (
	"strconv"
	"strings"

	"github.com/dtrace-go/dtrace/dlang/types"
)

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
	def *FuncDef
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
	for i := range varTable {
		b := &varTable[i]
		if b.Name == "" {
			continue
		}
		v := &Builtin{Name: b.Name}
		if b.array {
			v.Array = true
			v.Type = b.elem
		} else {
			v.Type = c.localProtoType(b.Type)
			if isOpaque(v.Type) {
				// Defined by a D library (cpuinfo_t) or the kernel:
				// resolved again when used.
				c.lateTypes[v] = b.Type
			}
		}
		c.builtins[b.Name] = v
	}
	c.funcs = map[string]*funcInfo{}
	for i := range funcTable {
		d := &funcTable[i]
		if d.Name == "" {
			continue
		}
		s := c.localParseProto(d.Proto)
		c.funcs[d.Name] = &funcInfo{
			fn:   &Func{Name: d.Name, Kind: d.Kind, Proto: d.Proto, Result: s.result, Destructive: d.class == actDestruct},
			def:  d,
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

// reduceVersion makes the builtins introduced after version v unknown, as
// dtrace's version option does (0: no change). Like dtrace's, the
// reduction cannot be undone.
func (c *checker) reduceVersion(v uint32) {
	if v == 0 {
		return
	}
	for i := range varTable {
		if d := &varTable[i]; d.Since > v {
			delete(c.builtins, d.Name)
		}
	}
	for i := range funcTable {
		if d := &funcTable[i]; d.Since > v {
			delete(c.funcs, d.Name)
		}
	}
}
