package ktypes

import (
	"bytes"
	"io"
	"strconv"
)

// Sym is one kernel symbol.
type Sym struct {
	Name string
	// Module is the module that defines the symbol: "vmlinux" for the
	// kernel itself.
	Module string
	Addr   uint64
	// Kind is the symbol's nm(1) type letter: T/t text, D/d data, B/b
	// bss, R/r read-only data, W/w weak, ...
	Kind byte
}

// Text reports whether the symbol is code.
func (s Sym) Text() bool {
	switch s.Kind {
	case 'T', 't', 'W', 'w':
		return true
	}
	return false
}

// Symbols is a kernel symbol table in the format of /proc/kallsyms:
// lines of "address type name", with "\t[module]" after the symbols of
// loadable modules, the kernel's own symbols first.
//
// The table is kept as text and searched per lookup: D programs name few
// kernel symbols, and indexing the 100,000 or more lines of a kernel
// would cost more than all their lookups.
type Symbols struct {
	data []byte
}

// ParseKallsyms reads a symbol table in the format of /proc/kallsyms.
func ParseKallsyms(r io.Reader) (*Symbols, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return &Symbols{data: data}, nil
}

// Lookup finds a symbol by name in module ("vmlinux" for the kernel), or
// in any module if module is "" (the kernel first, then the modules in
// the order of the table).
func (s *Symbols) Lookup(module, name string) (Sym, bool) {
	if s == nil || name == "" {
		return Sym{}, false
	}
	var first Sym
	found := false
	for _, sym := range s.all(name) {
		if sym.Module == module || module == "" && sym.Module == Kernel {
			return sym, true
		}
		if module == "" && !found {
			first, found = sym, true
		}
	}
	return first, found
}

// all returns the symbols named name, in table order.
func (s *Symbols) all(name string) []Sym {
	var out []Sym
	d := s.data
	key := []byte(" " + name)
	for off := 0; ; {
		i := bytes.Index(d[off:], key)
		if i < 0 {
			return out
		}
		start := off + i        // the blank before the name
		end := start + len(key) // just past the name
		off = end
		// The name must be the third field: "addr K name" with the line's
		// end or the module's tab right after it.
		if end < len(d) && d[end] != '\n' && d[end] != '\t' {
			continue
		}
		if start < 2 || d[start-2] != ' ' {
			continue
		}
		ls := bytes.LastIndexByte(d[:start-2], '\n') + 1
		addr, err := strconv.ParseUint(string(d[ls:start-2]), 16, 64)
		if err != nil {
			continue
		}
		sym := Sym{Name: name, Module: Kernel, Addr: addr, Kind: d[start-1]}
		if end < len(d) && d[end] == '\t' {
			le := bytes.IndexByte(d[end:], '\n')
			if le < 0 {
				le = len(d) - end
			}
			sym.Module = string(bytes.TrimSuffix(bytes.TrimPrefix(d[end+1:end+le], []byte("[")), []byte("]")))
		}
		out = append(out, sym)
	}
}
