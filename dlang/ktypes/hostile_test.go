package ktypes

import (
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/dtrace-go/dtrace/dlang/types"
)

// TestMalformedCycles: BTF that no compiler writes (a const of itself, a
// typedef of itself, a struct containing itself by value, an array of
// itself) converts to types that end, where a naive conversion recursed
// until the stack overflowed (FuzzBTF/ca8f13d3e75a37be) or left a type
// on which the checker would loop forever.
func TestMalformedCycles(t *testing.T) {
	i32 := &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}
	cnst := &btf.Const{}
	cnst.Type = cnst
	td := &btf.Typedef{Name: "loop_t"}
	td.Type = &btf.Volatile{Type: td}
	tdA, tdB := &btf.Typedef{Name: "a_t"}, &btf.Typedef{Name: "b_t"}
	tdA.Type, tdB.Type = tdB, tdA
	arr := &btf.Array{Index: i32, Nelems: 2}
	arr.Type = arr
	self := &btf.Struct{Name: "self", Size: 8}
	self.Members = []btf.Member{{Name: "x", Type: i32}, {Name: "me", Type: self, Offset: 32}}
	s1, s2 := &btf.Struct{Name: "s1", Size: 4}, &btf.Struct{Name: "s2", Size: 4}
	s1.Members = []btf.Member{{Name: "m", Type: &btf.Array{Index: i32, Type: s2, Nelems: 1}}}
	s2.Members = []btf.Member{{Name: "m", Type: &btf.Typedef{Name: "s1_t", Type: s1}}}
	// struct s3 { t3 m; } with typedef struct s3 t3, reached first
	// through the typedef (FuzzBTF/0d7734f06e438c75).
	s3 := &btf.Struct{Name: "s3", Size: 4}
	t3 := &btf.Typedef{Name: "t3", Type: s3}
	s3.Members = []btf.Member{{Name: "m", Type: t3}}
	// Legal cycles, through pointers, stay as they were.
	list := &btf.Struct{Name: "list", Size: 8}
	list.Members = []btf.Member{{Name: "next", Type: &btf.Pointer{Target: list}}}
	ptd := &btf.Typedef{Name: "ptd_t"}
	ptd.Type = &btf.Pointer{Target: ptd}

	c := newConverter("vmlinux", nil)
	// And a legal one through a typedef: typedef struct x { struct y *p; }
	// tx; struct y { tx m; }.
	sx, sy := &btf.Struct{Name: "x", Size: 8}, &btf.Struct{Name: "y", Size: 8}
	tx := &btf.Typedef{Name: "tx", Type: sx}
	sx.Members = []btf.Member{{Name: "p", Type: &btf.Pointer{Target: sy}}}
	sy.Members = []btf.Member{{Name: "m", Type: tx}}
	for _, bt := range []btf.Type{cnst, td, tdA, tdB, arr, self, s1, s2, t3, s3, list, ptd, tx, sy} {
		dt := c.convert(bt)
		if !byValue(dt, 0) {
			t.Errorf("%v: %v contains itself by value", bt, dt)
		}
		if _, ok := valueOf(dt, true); !ok {
			t.Errorf("%v: the typedef chain of %v does not end", bt, dt)
		}
	}
	if m := c.convert(self).(*types.Struct).Fields; len(m) != 2 || m[0].Type != types.Int || m[1].Type.Kind() != types.KindOpaque {
		t.Errorf("struct self: fields %v, want int and an opaque type", m)
	}
	if m := c.convert(sy).(*types.Struct).Fields[0].Type; m != c.convert(tx) || c.convert(tx).(*types.Typedef).Type != c.convert(sx) {
		t.Errorf("struct y: m is %v, want tx, a typedef of struct x", m)
	}
	if next := c.convert(list).(*types.Struct).Fields[0].Type; next.(*types.Pointer).Elem != c.convert(list) {
		t.Errorf("struct list: next is %v, want a pointer to struct list", next)
	}
}
