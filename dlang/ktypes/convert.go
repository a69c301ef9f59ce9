package ktypes

import (
	"github.com/cilium/ebpf/btf"

	"github.com/dtrace-go/dtrace/dlang/types"
)

// converter turns the BTF types of one module into dlang/types values.
// Every BTF type is converted once: struct, union and enum types have
// identity in dlang/types, so the cache keeps `struct task_struct` the
// same value wherever it is reached from.
type converter struct {
	module string
	spec   *btf.Spec
	cache  map[btf.Type]types.Type
	// complete caches the resolution of forward declarations by name
	// ("struct x", "union x"); a nil value records that none exists.
	complete map[string]btf.Type
	// busy holds the types being converted whose conversion is not
	// cached before their parts are: a cycle through them (a const of
	// itself, an array of itself) exists only in malformed BTF.
	busy map[btf.Type]bool
	// open holds the structs and unions whose members are being
	// converted: a member that is one of them by value (not through a
	// pointer) exists only in malformed BTF.
	open map[*types.Struct]bool
}

func newConverter(module string, spec *btf.Spec) *converter {
	return &converter{module: module, spec: spec, cache: map[btf.Type]types.Type{}, complete: map[string]btf.Type{}, busy: map[btf.Type]bool{}, open: map[*types.Struct]bool{}}
}

// The C intrinsic types under the names BTF gives them (DWARF's
// spelling), mapped to the checker's values so that kernel integers are
// the very types a D program writes.
var btfInts = map[string]*types.Basic{
	"char":                   types.Char,
	"signed char":            types.SignedChar,
	"unsigned char":          types.UnsignedChar,
	"short int":              types.Short,
	"short":                  types.Short,
	"short unsigned int":     types.UnsignedShort,
	"unsigned short":         types.UnsignedShort,
	"int":                    types.Int,
	"unsigned int":           types.UnsignedInt,
	"long int":               types.Long,
	"long":                   types.Long,
	"long unsigned int":      types.UnsignedLong,
	"unsigned long":          types.UnsignedLong,
	"long long int":          types.LongLong,
	"long long":              types.LongLong,
	"long long unsigned int": types.UnsignedLongLong,
	"unsigned long long":     types.UnsignedLongLong,
	"_Bool":                  types.Bool,
}

// convert returns the dlang type of t.
func (c *converter) convert(t btf.Type) types.Type {
	if r, ok := c.cache[t]; ok {
		return r
	}
	if c.busy[t] {
		// Malformed BTF: a type that contains itself other than through
		// a pointer, a struct, a typedef or a function. It gets a type
		// of its own name that nothing can be done with, where a
		// recursive conversion would never end.
		return types.NewOpaque(t.TypeName())
	}
	c.busy[t] = true
	defer delete(c.busy, t)
	var r types.Type
	switch t := t.(type) {
	case *btf.Void:
		r = types.Void
	case *btf.Int:
		r = intType(t)
	case *btf.Float:
		switch t.Size {
		case 4:
			r = types.Float
		case 8:
			r = types.Double
		default:
			r = types.LongDouble
		}
	case *btf.Pointer:
		// The pointer goes into the cache before its target is converted,
		// which ends the recursion of self-referencing structs.
		p := &types.Pointer{}
		c.cache[t] = p
		// What a pointer reaches is not part of the types being
		// converted above it: a struct reached through one may hold
		// by value a struct that holds the pointer (struct cgroup_root
		// holds a struct cgroup, whose css points to a struct cgroup).
		busy, open := c.busy, c.open
		c.busy, c.open = map[btf.Type]bool{}, map[*types.Struct]bool{}
		p.Elem = c.convert(t.Target)
		c.busy, c.open = busy, open
		return p
	case *btf.Array:
		r = &types.Array{Elem: c.convert(t.Type), Len: int64(t.Nelems)}
	case *btf.Struct:
		return c.structType(t, t.Name, t.Size, t.Members, false)
	case *btf.Union:
		return c.structType(t, t.Name, t.Size, t.Members, true)
	case *btf.Enum:
		e := &types.Enum{Tag: t.Name, Module: c.module, Bytes: int64(t.Size), Complete: len(t.Values) > 0}
		for _, v := range t.Values {
			// BTF has sign-extended signed values already.
			e.Values = append(e.Values, types.Enumerator{Name: v.Name, Value: int64(v.Value)})
		}
		r = e
	case *btf.Fwd:
		if def := c.definition(t); def != nil {
			r = c.convert(def)
		} else {
			r = &types.Struct{Union: t.Kind == btf.FwdUnion, Tag: t.Name, Module: c.module, Forward: true}
		}
	case *btf.Typedef:
		td := &types.Typedef{Name: t.Name, Module: c.module}
		c.cache[t] = td
		td.Type = c.convert(t.Type)
		if v, ok := valueOf(td.Type, false); !ok || v == types.Type(td) || holds(td.Type, td, map[*types.Struct]bool{}) {
			// Malformed BTF: a typedef of itself, or of a type that
			// holds it by value (struct s { t m; } with typedef
			// struct s t): a cycle through the typedef that the
			// struct could not see while the typedef was unfinished.
			td.Type = types.NewOpaque(t.Name)
		}
		return td
	case *btf.Const:
		r = c.qualify(types.Const, t.Type)
	case *btf.Volatile:
		r = c.qualify(types.Volatile, t.Type)
	case *btf.Restrict:
		r = c.qualify(types.Restrict, t.Type)
	case *btf.TypeTag:
		// Type tags (__user, __rcu, __percpu) mean nothing to D.
		r = c.convert(t.Type)
	case *btf.FuncProto:
		f := &types.Func{}
		c.cache[t] = f
		f.Result = c.convert(t.Return)
		for i, p := range t.Params {
			// BTF marks "..." as a last parameter of type void.
			if _, void := p.Type.(*btf.Void); void && i == len(t.Params)-1 {
				f.Variadic = true
				break
			}
			f.Params = append(f.Params, c.convert(p.Type))
		}
		return f
	case *btf.Func:
		r = c.convert(t.Type)
	case *btf.Var:
		r = c.convert(t.Type)
	default:
		// Datasec and declaration tags are not types of values.
		r = types.NewOpaque(t.TypeName())
	}
	c.cache[t] = r
	return r
}

// sizedInts are D's integer types of each size: signed, unsigned.
var sizedInts = map[uint32][2]types.Type{
	1: {types.SignedChar, types.UnsignedChar},
	2: {types.Short, types.UnsignedShort},
	4: {types.Int, types.UnsignedInt},
	8: {types.Long, types.UnsignedLong},
}

// intType maps a BTF integer to the C intrinsic of that name, or else to
// one of its size and signedness.
func intType(t *btf.Int) types.Type {
	if b, ok := btfInts[t.Name]; ok && b.Bytes == int64(t.Size) {
		return b
	}
	signed := t.Encoding&btf.Signed != 0
	switch {
	case t.Encoding&btf.Bool != 0:
		return types.Bool
	case t.Size == 1 && t.Encoding&btf.Char != 0:
		return types.Char
	}
	if ts, ok := sizedInts[t.Size]; ok {
		if signed {
			return ts[0]
		}
		return ts[1]
	}
	// __int128 and other sizes D has no name for: keep BTF's.
	return &types.Basic{K: types.KindInt, Name: t.Name, Bytes: int64(t.Size), Signed: signed}
}

// qualify returns inner with quals, merging directly nested qualifiers
// (BTF writes `const volatile int` as two nodes).
func (c *converter) qualify(q types.Qual, inner btf.Type) types.Type {
	it := c.convert(inner)
	if iq, ok := it.(*types.Qualified); ok {
		return &types.Qualified{Quals: q | iq.Quals, Type: iq.Type}
	}
	return &types.Qualified{Quals: q, Type: it}
}

// structType converts a struct or union. Members are converted after the
// struct is cached, so that pointers back to it end the recursion.
func (c *converter) structType(t btf.Type, name string, size uint32, members []btf.Member, union bool) types.Type {
	s := &types.Struct{Union: union, Tag: name, Module: c.module, Bytes: int64(size), Complete: true}
	c.cache[t] = s
	s.Fields = make([]*types.Field, 0, len(members))
	c.open[s] = true
	defer delete(c.open, s)
	for _, m := range members {
		ft := c.convert(m.Type)
		if v, ok := valueOf(ft, true); !ok || c.open[asStruct(v)] {
			// Malformed BTF: a struct that contains itself by value
			// would have no size.
			ft = types.NewOpaque(m.Type.TypeName())
		}
		bits := int(m.BitfieldSize)
		if bits > 0 {
			// The checker types a bit-field as an integer of the
			// smallest size that holds it, as dtrace does.
			if b, ok := types.Underlying(ft).(*types.Basic); ok && b.K == types.KindInt {
				ft = types.BitField(b, bits)
			}
		}
		s.Fields = append(s.Fields, &types.Field{Name: m.Name, Type: ft, Offset: int64(m.Offset), Bits: bits})
	}
	return s
}

// definition finds the complete struct or union a forward declaration
// names, or nil.
func (c *converter) definition(f *btf.Fwd) btf.Type {
	key := "struct " + f.Name
	if f.Kind == btf.FwdUnion {
		key = "union " + f.Name
	}
	if def, ok := c.complete[key]; ok {
		return def
	}
	var def btf.Type
	all, _ := c.spec.AnyTypesByName(f.Name)
	for _, t := range all {
		switch t.(type) {
		case *btf.Struct:
			if f.Kind == btf.FwdStruct {
				def = t
			}
		case *btf.Union:
			if f.Kind == btf.FwdUnion {
				def = t
			}
		}
		if def != nil {
			break
		}
	}
	c.complete[key] = def
	return def
}

// maxChain bounds the typedefs, qualifiers and array dimensions between
// a type and what its values are made of; real BTF has a handful.
const maxChain = 1 << 12

// valueOf strips typedefs and qualifiers (and array dimensions if arrays
// is set) from t. It is false when the chain does not end (malformed
// BTF); it may end in nil, at a typedef whose conversion is under way.
func valueOf(t types.Type, arrays bool) (types.Type, bool) {
	for i := 0; i < maxChain; i++ {
		switch u := t.(type) {
		case *types.Typedef:
			t = u.Type
		case *types.Qualified:
			t = u.Type
		case *types.Array:
			if !arrays {
				return t, true
			}
			t = u.Elem
		default:
			return t, true
		}
	}
	return nil, false
}

func asStruct(t types.Type) *types.Struct {
	s, _ := t.(*types.Struct)
	return s
}

// holds reports whether a value of t contains target by value: through
// typedefs, qualifiers, array elements and struct members, not pointers.
// seen holds the structs already searched.
func holds(t types.Type, target *types.Typedef, seen map[*types.Struct]bool) bool {
	for i := 0; i < maxChain; i++ {
		switch u := t.(type) {
		case *types.Typedef:
			if u == target {
				return true
			}
			t = u.Type
		case *types.Qualified:
			t = u.Type
		case *types.Array:
			t = u.Elem
		case *types.Struct:
			if seen[u] {
				return false
			}
			seen[u] = true
			for _, f := range u.Fields {
				if holds(f.Type, target, seen) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return true
}
