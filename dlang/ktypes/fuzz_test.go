package ktypes

import (
	"bytes"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/dtrace-go/dtrace/dlang/types"
)

// FuzzBTF imports types from mutated raw BTF as dtrace imports the
// kernel's: cilium/ebpf decodes the bytes and our converter turns every
// named type into a D type; MemberOffset reads the same bytes with its own
// decoder. Whatever the bytes, both give a type or an error. Seeds are
// type closures taken from a real kernel's BTF (list_head, hrtimer, iphdr
// ...) and the test kernel of testSpec.
func FuzzBTF(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw []byte) {
		MemberOffset(raw, "hrtimer", "node")
		MemberOffset(raw, "list_head", "next")
		spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
		if err != nil {
			return
		}
		k := New(Source{Kernel: func() (*btf.Spec, error) { return spec, nil }})
		if err := k.Err(); err != nil {
			t.Fatal(err)
		}
		n := 0
		for typ, err := range spec.All() {
			if err != nil {
				// cilium/ebpf decodes types lazily: a bad one shows here.
				break
			}
			if n++; n > 2000 {
				break
			}
			name := typ.TypeName()
			switch typ.(type) {
			case *btf.Struct:
				name = "struct " + name
				MemberOffset(raw, typ.TypeName(), "x")
			case *btf.Union:
				name = "union " + name
			case *btf.Enum:
				name = "enum " + name
			}
			if name != "" {
				k.LookupType("", name)
				k.IsTypeName(name)
			}
			if dt := k.modules[Kernel].conv.convert(typ); !byValue(dt, 0) {
				t.Fatalf("%v contains itself by value", typ)
			}
		}
	})
}

// byValue walks what a value of t is made of (typedefs, qualifiers, array
// elements, struct members; not pointer targets) and reports whether it
// ends: a type containing itself by value would hang the checker. path
// holds the structs being walked, done those walked already.
func byValue(t types.Type, depth int) bool {
	return walkValue(t, depth, map[*types.Struct]bool{}, map[*types.Struct]bool{})
}

func walkValue(t types.Type, depth int, path, done map[*types.Struct]bool) bool {
	if depth > 1<<12 {
		return false
	}
	switch u := t.(type) {
	case *types.Typedef:
		return walkValue(u.Type, depth+1, path, done)
	case *types.Qualified:
		return walkValue(u.Type, depth+1, path, done)
	case *types.Array:
		return walkValue(u.Elem, depth+1, path, done)
	case *types.Struct:
		if path[u] {
			return false
		}
		if done[u] {
			return true
		}
		path[u] = true
		for _, f := range u.Fields {
			if !walkValue(f.Type, depth+1, path, done) {
				return false
			}
		}
		delete(path, u)
		done[u] = true
	}
	return true
}
