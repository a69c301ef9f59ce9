package ktypes

import (
	"bytes"
	"io"
	"strconv"
	"sync"
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

// Local reports whether the symbol is local to its object file (a
// static C symbol), which kallsyms writes with a lowercase type letter;
// w, v and u are not local but weak or unique.
func (s Sym) Local() bool {
	switch s.Kind {
	case 'w', 'v', 'u':
		return false
	}
	return s.Kind >= 'a' && s.Kind <= 'z'
}

// Symbols is a kernel symbol table in the format of /proc/kallsyms:
// lines of "address type name", with "\t[module]" after the symbols of
// loadable modules, the kernel's own symbols first.
//
// The table is kept as text and searched per lookup: D programs name few
// kernel symbols, and indexing the 100,000 or more lines of a kernel
// would cost more than all their lookups; a program that names many gets
// an index after a few. A Symbols is safe for concurrent use.
type Symbols struct {
	data []byte

	mu sync.Mutex
	// looked counts searches of the text; after a few, index holds the
	// offset of every line by name, since a program naming many
	// symbols is better served by one pass.
	looked int
	index  map[string][]int32
}

// indexAfter is the number of searches of the text after which Symbols
// indexes it: a search reads the whole table (some 2ms for 5MB); an
// index costs about twenty of them.
const indexAfter = 20

// ParseKallsyms reads a symbol table in the format of /proc/kallsyms.
func ParseKallsyms(r io.Reader) (*Symbols, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return &Symbols{data: data}, nil
}

// Lookup finds a symbol by name in module ("vmlinux" for the kernel), or
// in any module if module is "". Of several symbols of one name it
// prefers a global one to a local (static) one, and with module "" the
// kernel's to a module's; among equals, the first in the table.
func (s *Symbols) Lookup(module, name string) (Sym, bool) {
	if s == nil || name == "" {
		return Sym{}, false
	}
	var best Sym
	rank := 0
	for _, sym := range s.all(name) {
		if r := lookupRank(sym, module); r > rank {
			best, rank = sym, r
		}
	}
	return best, rank > 0
}

// lookupRank orders the candidates of a Lookup in module: 0 for a
// symbol that does not match, higher for a better match.
func lookupRank(sym Sym, module string) int {
	r := 2
	if sym.Local() {
		r = 1
	}
	switch {
	case module == "":
		// Globals first, then the kernel's before a module's.
		r *= 2
		if sym.Module == Kernel {
			r++
		}
		return r
	case sym.Module == module:
		return r
	}
	return 0
}

// all returns the symbols named name, in table order.
func (s *Symbols) all(name string) []Sym {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.index == nil {
		s.looked++
		if s.looked > indexAfter {
			s.buildIndex()
		}
	}
	if s.index != nil {
		var out []Sym
		for _, off := range s.index[name] {
			if sym, ok := s.parseLine(int(off)); ok {
				out = append(out, sym)
			}
		}
		return out
	}
	return s.search(name)
}

// buildIndex records the offset of each line under its symbol's name.
func (s *Symbols) buildIndex() {
	s.index = make(map[string][]int32, bytes.Count(s.data, []byte{'\n'}))
	for off := 0; off < len(s.data); {
		end := bytes.IndexByte(s.data[off:], '\n')
		if end < 0 {
			end = len(s.data) - off
		}
		line := s.data[off : off+end]
		if i := bytes.IndexByte(line, ' '); i >= 0 && i+3 <= len(line) {
			name := line[i+3:]
			if t := bytes.IndexByte(name, '\t'); t >= 0 {
				name = name[:t]
			}
			s.index[string(name)] = append(s.index[string(name)], int32(off))
		}
		off += end + 1
	}
}

// parseLine decodes the line at offset off.
func (s *Symbols) parseLine(off int) (Sym, bool) {
	line := s.data[off:]
	if e := bytes.IndexByte(line, '\n'); e >= 0 {
		line = line[:e]
	}
	addr, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok || len(rest) < 3 || rest[1] != ' ' {
		return Sym{}, false
	}
	a, err := strconv.ParseUint(string(addr), 16, 64)
	if err != nil {
		return Sym{}, false
	}
	sym := Sym{Module: Kernel, Addr: a, Kind: rest[0]}
	name, mod, hasMod := bytes.Cut(rest[2:], []byte{'\t'})
	sym.Name = string(name)
	if hasMod {
		sym.Module = string(bytes.TrimSuffix(bytes.TrimPrefix(mod, []byte("[")), []byte("]")))
	}
	return sym, true
}

// search scans the text for the lines of symbol name.
func (s *Symbols) search(name string) []Sym {
	var out []Sym
	d := s.data
	// Searching for the name alone (not " name") lets bytes.Index skip
	// ahead on its first byte, which blanks would not.
	key := []byte(name)
	for off := 0; ; {
		i := bytes.Index(d[off:], key)
		if i < 0 {
			return out
		}
		start := off + i        // the name's first byte
		end := start + len(key) // just past the name
		off = end
		// The name must be the third field: "addr K name" with the line's
		// end or the module's tab right after it.
		if end < len(d) && d[end] != '\n' && d[end] != '\t' {
			continue
		}
		if start < 3 || d[start-1] != ' ' || d[start-3] != ' ' {
			continue
		}
		ls := bytes.LastIndexByte(d[:start-3], '\n') + 1
		addr, err := strconv.ParseUint(string(d[ls:start-3]), 16, 64)
		if err != nil {
			continue
		}
		sym := Sym{Name: name, Module: Kernel, Addr: addr, Kind: d[start-2]}
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
