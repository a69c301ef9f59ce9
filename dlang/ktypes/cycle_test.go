package ktypes

import (
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/dtrace-go/dtrace/dlang/types"
)

// A struct reached through a pointer may hold by value a struct that
// points back to it: the kernel's struct cgroup_root holds a struct cgroup,
// whose css (held by value) points to a struct cgroup. Converted from the
// pointer (a cast to struct cgroup_root *), no member may become opaque.
func TestPointerCycleThroughValue(t *testing.T) {
	root, cg, css := &btf.Struct{Name: "cgroup_root", Size: 16}, &btf.Struct{Name: "cgroup", Size: 16}, &btf.Struct{Name: "css", Size: 8}
	pcg := &btf.Pointer{Target: cg}
	css.Members = []btf.Member{{Name: "cgroup", Type: pcg}}
	cg.Members = []btf.Member{{Name: "self", Type: css}, {Name: "root", Type: &btf.Pointer{Target: root}, Offset: 64}}
	root.Members = []btf.Member{{Name: "cgrp", Type: cg}}
	// The css is met first through the pointer to the struct cgroup
	// that holds it.
	first := &btf.Struct{Name: "first", Size: 8}
	first.Members = []btf.Member{{Name: "c", Type: &btf.Pointer{Target: css}}}
	c := newConverter("vmlinux", nil)
	c.convert(first)
	p, ok := c.convert(&btf.Pointer{Target: root}).(*types.Pointer)
	if !ok {
		t.Fatal("struct cgroup_root * is not a pointer")
	}
	var walk func(s *types.Struct, depth int)
	walk = func(s *types.Struct, depth int) {
		for _, f := range s.Fields {
			switch ft := f.Type.(type) {
			case *types.Struct:
				walk(ft, depth+1)
			case *types.Pointer:
				if _, ok := ft.Elem.(*types.Struct); !ok {
					t.Errorf("struct %s member %s: %s, want a pointer to a struct", s.Tag, f.Name, types.TypeString(ft))
				}
			default:
				t.Errorf("struct %s member %s: %s", s.Tag, f.Name, types.TypeString(f.Type))
			}
		}
	}
	walk(p.Elem.(*types.Struct), 0)
}
