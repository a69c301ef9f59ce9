//go:build linux

package check

import (
	"bufio"
	"os"
	"strings"
	"sync"

	"github.com/cilium/ebpf/btf"

	"github.com/dtrace-go/dtrace/dlang/types"
)

// btfKernel is a small Kernel over the running kernel's BTF, so that the
// corpus test sees kernel types as dtrace does. (Package ktypes is the
// real one; this exercises the interface.)
type btfKernel struct {
	spec   *btf.Spec
	mu     sync.Mutex
	cache  map[btf.Type]types.Type
	byName map[string]types.Type
	syms   map[string]bool
}

var (
	testKernelOnce sync.Once
	testKernel     *btfKernel
)

// kernelForTest returns the running kernel's types, or nil.
func kernelForTest() Kernel {
	testKernelOnce.Do(func() {
		spec, err := btf.LoadKernelSpec()
		if err != nil {
			return
		}
		k := &btfKernel{spec: spec, cache: map[btf.Type]types.Type{}, byName: map[string]types.Type{}, syms: map[string]bool{}}
		if f, err := os.Open("/proc/kallsyms"); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if w := strings.Fields(sc.Text()); len(w) >= 3 {
					k.syms[w[2]] = true
				}
			}
			f.Close()
		}
		testKernel = k
	})
	if testKernel == nil {
		return nil
	}
	return testKernel
}

func (k *btfKernel) LookupType(module, name string) types.Type {
	// Module BTF is not searched separately: vmlinux stands for all.
	k.mu.Lock()
	if t, ok := k.byName[name]; ok {
		k.mu.Unlock()
		return t
	}
	k.mu.Unlock()
	t := k.lookup(name)
	k.mu.Lock()
	k.byName[name] = t
	k.mu.Unlock()
	return t
}

func (k *btfKernel) lookup(name string) types.Type {
	want := func(t btf.Type) bool { _, ok := t.(*btf.Typedef); return ok }
	switch {
	case strings.HasPrefix(name, "struct "):
		name = name[len("struct "):]
		want = func(t btf.Type) bool { _, ok := t.(*btf.Struct); return ok }
	case strings.HasPrefix(name, "union "):
		name = name[len("union "):]
		want = func(t btf.Type) bool { _, ok := t.(*btf.Union); return ok }
	case strings.HasPrefix(name, "enum "):
		name = name[len("enum "):]
		want = func(t btf.Type) bool { _, ok := t.(*btf.Enum); return ok }
	}
	all, err := k.spec.AnyTypesByName(name)
	if err != nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, t := range all {
		if want(t) {
			return k.conv(t)
		}
	}
	return nil
}

func (k *btfKernel) LookupSymbol(module, name string) (*Symbol, bool) {
	if !k.syms[name] {
		return nil, false
	}
	return &Symbol{Module: "vmlinux", Name: name, Type: types.NewOpaque("<kernel variable>")}, true
}

// conv converts a BTF type, caching so that cycles end.
func (k *btfKernel) conv(t btf.Type) types.Type {
	if c, ok := k.cache[t]; ok {
		return c
	}
	var r types.Type
	switch t := t.(type) {
	case *btf.Void:
		r = types.Void
	case *btf.Int:
		switch {
		case t.Encoding&btf.Bool != 0:
			r = types.Bool
		case t.Encoding&btf.Char != 0 || t.Size == 1 && t.Name == "char":
			r = types.Char
		default:
			signed := t.Encoding&btf.Signed != 0
			r = map[uint32][2]types.Type{
				1:  {types.UnsignedChar, types.SignedChar},
				2:  {types.UnsignedShort, types.Short},
				4:  {types.UnsignedInt, types.Int},
				8:  {types.UnsignedLong, types.Long},
				16: {types.UnsignedLongLong, types.LongLong},
			}[t.Size][b2i(signed)]
		}
	case *btf.Float:
		r = map[uint32]types.Type{4: types.Float, 8: types.Double}[t.Size]
		if r == nil {
			r = types.LongDouble
		}
	case *btf.Pointer:
		p := &types.Pointer{}
		k.cache[t] = p
		p.Elem = k.conv(t.Target)
		return p
	case *btf.Array:
		r = &types.Array{Elem: k.conv(t.Type), Len: int64(t.Nelems)}
	case *btf.Struct, *btf.Union:
		var name string
		var size uint32
		var members []btf.Member
		union := false
		if s, ok := t.(*btf.Struct); ok {
			name, size, members = s.Name, s.Size, s.Members
		} else {
			u := t.(*btf.Union)
			name, size, members, union = u.Name, u.Size, u.Members, true
		}
		s := &types.Struct{Union: union, Tag: name, Module: "vmlinux", Bytes: int64(size), Complete: true}
		k.cache[t] = s
		for _, m := range members {
			ft := k.conv(m.Type)
			if m.BitfieldSize > 0 {
				if b, ok := types.Underlying(ft).(*types.Basic); ok {
					ft = types.BitField(b, int(m.BitfieldSize))
				}
			}
			s.Fields = append(s.Fields, &types.Field{Name: m.Name, Type: ft, Offset: int64(m.Offset), Bits: int(m.BitfieldSize)})
		}
		return s
	case *btf.Enum:
		e := &types.Enum{Tag: t.Name, Module: "vmlinux", Bytes: int64(t.Size), Complete: true}
		for _, v := range t.Values {
			e.Values = append(e.Values, types.Enumerator{Name: v.Name, Value: int64(v.Value)})
		}
		r = e
	case *btf.Fwd:
		r = &types.Struct{Union: t.Kind == btf.FwdUnion, Tag: t.Name, Module: "vmlinux", Forward: true}
	case *btf.Typedef:
		td := &types.Typedef{Name: t.Name, Module: "vmlinux"}
		k.cache[t] = td
		td.Type = k.conv(t.Type)
		return td
	case *btf.Const:
		r = &types.Qualified{Quals: types.Const, Type: k.conv(t.Type)}
	case *btf.Volatile:
		r = &types.Qualified{Quals: types.Volatile, Type: k.conv(t.Type)}
	case *btf.Restrict:
		r = &types.Qualified{Quals: types.Restrict, Type: k.conv(t.Type)}
	case *btf.TypeTag:
		r = k.conv(t.Type)
	case *btf.FuncProto:
		f := &types.Func{Result: k.conv(t.Return)}
		for _, p := range t.Params {
			f.Params = append(f.Params, k.conv(p.Type))
		}
		r = f
	default:
		r = types.NewOpaque("<btf>")
	}
	k.cache[t] = r
	return r
}
