package fbt

import (
	"strings"

	"github.com/cilium/ebpf/btf"
)

// This file reads the kernel functions' BTF: the spec of a module, which
// arguments are scalars the prologue can read, and their C types.

// spec returns the BTF of a module (vmlinux for the core kernel), or nil.
// pv.mu is held.
func (pv *Provider) spec(mod string) *btf.Spec {
	if s, ok := pv.specs[mod]; ok {
		return s
	}
	var s *btf.Spec
	var err error
	if mod == Kernel {
		s, err = pv.cache.Kernel()
	} else {
		s, err = pv.cache.Module(mod)
	}
	if err != nil {
		s = nil
	}
	pv.specs[mod] = s
	return s
}

// scalar returns the size and signedness of a type passed in one
// register (integer, enum, pointer), or false for anything else.
func scalar(t btf.Type) (int, bool, bool) {
	switch u := btf.UnderlyingType(t).(type) {
	case *btf.Int:
		return int(u.Size), u.Encoding == btf.Signed, u.Size <= 8
	case *btf.Enum:
		return int(u.Size), u.Signed, u.Size <= 8
	case *btf.Pointer:
		return 8, false, true
	}
	return 0, false, false
}

// ctxReadable reports whether the verifier lets an fentry/fexit program
// read an argument (or return value) of type t from its context: an
// integer or enum, or a pointer to void, an integer or a struct or union
// (it refuses pointers to pointers and to const void, say, as "not a
// struct").
func ctxReadable(t btf.Type) bool {
	switch u := btf.UnderlyingType(t).(type) {
	case *btf.Int:
		return u.Size <= 8
	case *btf.Enum:
		return u.Size <= 8
	case *btf.Pointer:
		// void * only unqualified: the verifier looks for a zero
		// type id, and const void * has const's.
		if _, ok := u.Target.(*btf.Void); ok {
			return true
		}
		switch btf.UnderlyingType(u.Target).(type) {
		case *btf.Int, *btf.Struct, *btf.Union:
			return true
		}
	}
	return false
}

// CType writes a BTF type as C ("struct file *", "loff_t *", "char *").
func CType(t btf.Type) string {
	stars := 0
	for {
		// Qualifiers (const, volatile, restrict, type tags) are dropped.
		t = btf.QualifiedType(t)
		p, ok := t.(*btf.Pointer)
		if !ok {
			break
		}
		stars++
		t = p.Target
	}
	base := "void"
	switch x := t.(type) {
	case *btf.Int, *btf.Float, *btf.Typedef:
		base = x.TypeName()
	case *btf.Struct:
		if x.Name != "" {
			base = "struct " + x.Name
		}
	case *btf.Union:
		if x.Name != "" {
			base = "union " + x.Name
		}
	case *btf.Enum:
		if x.Name != "" {
			base = "enum " + x.Name
		} else {
			base = "int"
		}
	case *btf.Fwd:
		if x.Kind == btf.FwdUnion {
			base = "union " + x.Name
		} else {
			base = "struct " + x.Name
		}
	case *btf.Array:
		// Not a parameter type in C; a pointer is the nearest.
		return CType(&btf.Pointer{Target: x.Type})
	}
	if stars == 0 {
		return base
	}
	return base + " " + strings.Repeat("*", stars)
}
