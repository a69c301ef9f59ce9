package ktypes

import (
	"errors"
	"strings"
	"sync"

	"github.com/cilium/ebpf/btf"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// Kernel is the module name of the kernel itself, as D scopes it
// (vmlinux`task_struct).
const Kernel = "vmlinux"

// Source says where a Types finds its data. Every function is called at
// most once, when the data is first needed; a nil function means the data
// is not available.
type Source struct {
	// Kernel loads the kernel's BTF.
	Kernel func() (*btf.Spec, error)
	// Module loads the BTF of a loaded kernel module, split on the
	// kernel's; an error means there is no such module.
	Module func(name string) (*btf.Spec, error)
	// Symbols loads the kernel's symbol table.
	Symbols func() (*Symbols, error)
}

// Types gives the D checker the kernel's types and symbols. It
// implements check.Kernel and has an IsTypeName for the parser.
//
// Nothing is read until it is asked for: the kernel's BTF on the first
// type lookup, a module's BTF on the first lookup scoped to that module,
// the symbol table on the first symbol lookup. Types are converted to
// dlang/types values one at a time, with everything they reach, and
// cached, so a struct is the same *types.Struct wherever it is reached
// from. A Types is safe for concurrent use.
type Types struct {
	src Source

	mu      sync.Mutex
	modules map[string]*module // by name
	// forwards holds the incomplete structs and unions of modules
	// without BTF, by module`name.
	forwards map[string]*types.Struct
	syms     *Symbols
	symErr   error
	symDone  bool
}

// module is one BTF spec and its converted types.
type module struct {
	name string
	spec *btf.Spec
	conv *converter
	err  error
}

// New returns kernel types read from src.
func New(src Source) *Types {
	return &Types{src: src, modules: map[string]*module{}, forwards: map[string]*types.Struct{}}
}

var _ check.Kernel = (*Types)(nil)

// Err loads the kernel's BTF if no lookup has yet and returns the error
// that gave, or nil. Lookups report a type that could not be loaded as
// absent; Err tells why.
func (k *Types) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.module(Kernel).err
}

// module returns the named module, loading its BTF the first time.
// k.mu is held.
func (k *Types) module(name string) *module {
	if m, ok := k.modules[name]; ok {
		return m
	}
	m := &module{name: name}
	switch {
	case name == Kernel && k.src.Kernel != nil:
		m.spec, m.err = k.src.Kernel()
	case name != Kernel && k.src.Module != nil:
		m.spec, m.err = k.src.Module(name)
	default:
		m.err = errors.New("no BTF for module " + name)
	}
	if m.err == nil && m.spec == nil {
		m.err = errors.New("no BTF for module " + name)
	}
	if m.err == nil {
		m.conv = newConverter(name, m.spec)
	}
	k.modules[name] = m
	return m
}

// scope returns the module a lookup in D's scope module searches:
// the kernel for "" (D searches every module; this one has the types
// that matter), none for D's own containers "C" and "D".
func (k *Types) scope(module string) *module {
	switch module {
	case "C", "D":
		return nil
	case "":
		module = Kernel
	}
	m := k.module(module)
	if m.err != nil {
		return nil
	}
	return m
}

// LookupType implements types.Lookup: name is "struct tag", "union tag",
// "enum tag" or a typedef name; module is "vmlinux", a module's name, or
// "" for the kernel.
func (k *Types) LookupType(module, name string) types.Type {
	k.mu.Lock()
	defer k.mu.Unlock()
	m := k.scope(module)
	if m == nil {
		return k.unloaded(module, name)
	}
	t := m.find(name)
	if t == nil {
		return nil
	}
	return m.conv.convert(t)
}

// unloaded returns, for a struct or union of a module that has no BTF
// here, an incomplete type of that name: dtrace knows the types of
// modules that are not loaded, and a program may use pointers to them
// (`(struct can`dev_rcv_lists *)NULL`); without their BTF, ktypes
// cannot tell a module that is not loaded from one that does not exist.
// k.mu is held.
func (k *Types) unloaded(module, name string) types.Type {
	if module == "" || module == "C" || module == "D" || module == Kernel {
		return nil
	}
	union := strings.HasPrefix(name, "union ")
	if !union && !strings.HasPrefix(name, "struct ") {
		return nil
	}
	key := module + "`" + name
	if t, ok := k.forwards[key]; ok {
		return t
	}
	_, tag, _ := strings.Cut(name, " ")
	t := &types.Struct{Union: union, Tag: strings.TrimSpace(tag), Module: module, Forward: true}
	k.forwards[key] = t
	return t
}

// IsTypeName reports whether name, possibly scoped (module`name), is a
// kernel typedef: what dtrace's lexer reads as a type name. It is meant
// for syntax.Config.IsTypeName.
func (k *Types) IsTypeName(name string) bool {
	module, n, ok := strings.Cut(name, "`")
	if !ok {
		module, n = "", name
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	m := k.scope(module)
	if m == nil {
		return false
	}
	_, isTypedef := m.find(n).(*btf.Typedef)
	return isTypedef
}

// find returns the BTF type with C name name, or nil. Of several types
// of one name and kind (vmlinux keeps a few that differ between
// compilation units) it takes the first, the one dedup kept canonical;
// of a complete and an incomplete one, the complete one.
func (m *module) find(name string) btf.Type {
	kind, tag := "typedef", name
	for _, kw := range []string{"struct", "union", "enum"} {
		if strings.HasPrefix(name, kw+" ") {
			kind, tag = kw, strings.TrimSpace(name[len(kw)+1:])
			break
		}
	}
	if tag == "" {
		return nil
	}
	all, err := m.spec.AnyTypesByName(tag)
	if err != nil {
		return nil
	}
	var found btf.Type
	for _, t := range all {
		switch t := t.(type) {
		case *btf.Typedef:
			if kind == "typedef" {
				return t
			}
		case *btf.Struct:
			if kind == "struct" {
				return t
			}
		case *btf.Union:
			if kind == "union" {
				return t
			}
		case *btf.Enum:
			if kind == "enum" {
				if len(t.Values) > 0 {
					return t
				}
				found = t
			}
		case *btf.Fwd:
			if kind == "struct" && t.Kind == btf.FwdStruct || kind == "union" && t.Kind == btf.FwdUnion {
				found = t
			}
		}
	}
	return found
}

// LookupSymbol implements check.Kernel: it finds a kernel symbol by
// module and name (module "" searches the kernel, then the modules),
// preferring a global symbol to a local one of the same name. Its type is
// the type BTF gives the variable; BTF describes only per-CPU variables,
// so other data symbols have none (nil: the checker takes the type from
// an extern declaration), and functions, which are no variables, are
// uintptr_t, as dtrace types a kernel symbol without type data.
func (k *Types) LookupSymbol(module, name string) (*check.Symbol, bool) {
	if module == "C" || module == "D" {
		return nil, false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.symDone {
		k.symDone = true
		if k.src.Symbols != nil {
			k.syms, k.symErr = k.src.Symbols()
		}
	}
	sym, ok := k.syms.Lookup(module, name)
	if !ok {
		return nil, false
	}
	return &check.Symbol{Module: sym.Module, Name: sym.Name, Addr: sym.Addr, Local: sym.Local(), Type: k.symbolType(sym)}, true
}

// symbolType returns the type of a symbol's object: its BTF VAR's type,
// nil for other data (the checker looks for an extern declaration), and
// uintptr_t for code. k.mu is held.
func (k *Types) symbolType(sym Sym) types.Type {
	m := k.scope(sym.Module)
	if m == nil {
		m = k.scope(Kernel)
	}
	if !sym.Text() {
		if m == nil {
			return nil
		}
		if all, err := m.spec.AnyTypesByName(sym.Name); err == nil {
			for _, t := range all {
				if v, ok := t.(*btf.Var); ok {
					return m.conv.convert(v.Type)
				}
			}
		}
		return nil
	}
	if m != nil {
		if t, ok := m.find("uintptr_t").(*btf.Typedef); ok {
			return m.conv.convert(t)
		}
	}
	return types.Uintptr
}

// SymbolsErr returns the error that loading the symbol table gave, or
// nil (also when it has not been loaded yet).
func (k *Types) SymbolsErr() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.symErr
}
