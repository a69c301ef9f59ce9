package symbol

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"sync"
	"syscall"
)

// Func is a function symbol of an ELF object. Value is its link-time
// virtual address.
type Func struct {
	Name  string
	Value uint64
	Size  uint64
	Bind  elf.SymBind
	// end bounds a function of no size (hand-written assembly,
	// __restore_rt, _init): the next function's start or the end of its
	// section, whichever comes first.
	end uint64
}

// limit is the first address past fn: an address is named fn+off only
// below it.
func (fn Func) limit() uint64 {
	switch {
	case fn.Size > 0:
		return fn.Value + fn.Size
	case fn.end > fn.Value:
		return fn.end
	}
	return fn.Value + 1
}

// Note is one ELF note: its owner name, type and descriptor, and the
// class of the file it is in (ELFCLASS32: addresses in the descriptor
// are 4 bytes wide).
type Note struct {
	Owner string
	Type  uint32
	Desc  []byte
	Class elf.Class
}

// Section is what the providers need to know of an ELF section.
type Section struct {
	Name   string
	Addr   uint64
	Offset uint64
	Size   uint64
}

// Object is one ELF file as the user-level providers and the symbolizer
// see it: its function symbols sorted by address, its loadable segments
// (to turn virtual addresses into file offsets and back) and its sections.
// It is immutable once made and safe for concurrent use.
type Object struct {
	// Path is the path the Object was opened through; objects shared
	// through LoadObject differ only in it.
	Path string
	*objectData
}

// objectData is what one ELF file holds, shared by every Object of that
// file.
type objectData struct {
	Type elf.Type
	// Class is the ELF class: ELFCLASS32 for an i386 program.
	Class elf.Class
	// Entry is the ELF header's entry point (link-time address).
	Entry uint64
	// Soname is the DT_SONAME of a shared library, or "".
	Soname string
	// BuildID is the GNU build id, in hex, or "".
	BuildID string
	// DebugPath is the separate debug file whose symbols the object
	// took, or "" (see DebugFile).
	DebugPath string
	// SymbolSource says where the function names came from: ".symtab",
	// the debug file's path, ".gnu_debugdata" or ".dynsym".
	SymbolSource string

	funcs    []Func            // sorted by Value; aliases kept, best first
	plts     []Func            // PLT stubs, name@plt, sorted (plt.go)
	data     map[string]uint64 // data symbols (STT_OBJECT) by name
	loads    []elf.ProgHeader
	sections []Section
	notes    map[string][]Note // by section name, read on demand
	seen     map[string]bool   // while reading: functions added, by name and address
	mu       sync.Mutex

	linesOnce sync.Once
	lines     *lineTable
}

// OpenObject reads the ELF file at path. It reads the symbol tables at
// once, because every user of an Object needs them.
func OpenObject(path string) (*Object, error) {
	f, err := openELF(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return newObject(f, path, true)
}

// newObject reads the symbols, segments and sections of an opened ELF
// file; the file may be anything any user can write, so nothing it says
// is trusted to be consistent. Function names come from the first of
// .symtab, the separate debug file's .symtab, .gnu_debugdata's .symtab,
// and then .dynsym; remote lets the debug file come from debuginfod.
func newObject(f *elf.File, path string, remote bool) (*Object, error) {
	o := &Object{Path: path, objectData: &objectData{Type: f.Type, Class: f.Class, Entry: f.Entry, notes: map[string][]Note{}, data: map[string]uint64{}}}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			o.loads = append(o.loads, p.ProgHeader)
		}
	}
	for _, s := range f.Sections {
		o.sections = append(o.sections, Section{Name: s.Name, Addr: s.Addr, Offset: s.Offset, Size: s.Size})
	}
	if libs, err := f.DynString(elf.DT_SONAME); err == nil && len(libs) > 0 {
		o.Soname = libs[0]
	}
	if id := buildID(f); id != nil {
		o.BuildID = fmt.Sprintf("%x", id)
	}
	syms, err := f.Symbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(syms) > 0 {
		o.addFuncs(syms, f)
		o.SymbolSource = ".symtab"
	} else {
		o.stripped(f, path, remote)
	}
	if syms, err := f.DynamicSymbols(); err == nil {
		o.addFuncs(syms, f)
		if o.SymbolSource == "" && len(o.funcs) > 0 {
			o.SymbolSource = ".dynsym"
		}
	} else if !errors.Is(err, elf.ErrNoSymbols) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	o.sortFuncs()
	o.plts = pltStubs(f)
	return o, nil
}

// stripped names the functions of an object without .symtab: its
// separate debug file (libc6-dbg, a -dbgsym package, debuginfod) names
// them all, __libc_start_call_main at the bottom of every ustack(); or
// else MiniDebugInfo names those .dynsym leaves out.
func (o *Object) stripped(f *elf.File, path string, remote bool) {
	if dbg := findDebugFile(f, path, remote); dbg != "" {
		if df, err := openELF(dbg); err == nil {
			if syms, err := df.Symbols(); err == nil && len(syms) > 0 {
				o.addFuncs(syms, df)
				o.DebugPath, o.SymbolSource = dbg, dbg
			}
			df.Close()
		}
	}
	if o.SymbolSource != "" {
		return
	}
	if mdi, err := debugData(f); err == nil && mdi != nil {
		if syms, err := mdi.Symbols(); err == nil && len(syms) > 0 {
			o.addFuncs(syms, mdi)
			o.SymbolSource = ".gnu_debugdata"
		}
	}
}

// addFuncs adds the function and data symbols of syms, read from src
// (whose section headers bound the functions of no size).
func (o *Object) addFuncs(syms []elf.Symbol, src *elf.File) {
	if o.seen == nil {
		o.seen = map[string]bool{}
	}
	for _, s := range syms {
		t := elf.ST_TYPE(s.Info)
		if t == elf.STT_OBJECT && s.Section != elf.SHN_UNDEF && s.Name != "" {
			if _, ok := o.data[s.Name]; !ok {
				o.data[s.Name] = s.Value
			}
			continue
		}
		if t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC || s.Value == 0 || s.Name == "" {
			continue
		}
		if s.Section == elf.SHN_UNDEF {
			continue
		}
		// .dynsym repeats most of .symtab.
		key := s.Name + "\x00" + strconv.FormatUint(s.Value, 16)
		if o.seen[key] {
			continue
		}
		o.seen[key] = true
		fn := Func{Name: s.Name, Value: s.Value, Size: s.Size, Bind: elf.ST_BIND(s.Info)}
		if fn.Size == 0 {
			fn.end = fn.Value + 1
			if i := int(s.Section); s.Section < elf.SHN_LORESERVE && i < len(src.Sections) {
				if sec := src.Sections[i]; sec.Addr <= fn.Value && fn.Value-sec.Addr < sec.Size {
					fn.end = sec.Addr + sec.Size
				}
			}
		}
		o.funcs = append(o.funcs, fn)
	}
}

// sortFuncs sorts the functions and ends each function of no size at
// the next function's start; the table of names seen is dropped.
func (o *Object) sortFuncs() {
	sort.Slice(o.funcs, func(i, j int) bool { return better(o.funcs[i], o.funcs[j]) })
	o.seen = nil
	next := uint64(0)
	for i := len(o.funcs) - 1; i >= 0; i-- {
		fn := &o.funcs[i]
		if fn.Size == 0 && next > fn.Value && next < fn.end {
			fn.end = next
		}
		if i == 0 || o.funcs[i-1].Value != fn.Value {
			next = fn.Value
		}
	}
}

// better orders functions by address and, of aliases at one address,
// puts first the one to name: as libproc does for dtrace, a global (or
// weak) symbol before a local one, then the name with fewer leading
// underscores (malloc, not __libc_malloc), the smaller size, and the
// name.
func better(a, b Func) bool {
	if a.Value != b.Value {
		return a.Value < b.Value
	}
	if al, bl := a.Bind == elf.STB_LOCAL, b.Bind == elf.STB_LOCAL; al != bl {
		return bl
	}
	if au, bu := underscores(a.Name), underscores(b.Name); au != bu {
		return au < bu
	}
	if a.Size != b.Size {
		return a.Size < b.Size
	}
	return a.Name < b.Name
}

func underscores(s string) int {
	n := 0
	for n < len(s) && s[n] == '_' {
		n++
	}
	return n
}

// Funcs returns the function symbols sorted by address. Callers must not
// modify the slice.
func (o *Object) Funcs() []Func { return o.funcs }

// Lookup returns the function containing the link-time address vaddr.
// A function with a size contains [Value, Value+Size); one without a size
// (hand-written assembly) reaches to the next function or the end of its
// section, whichever comes first: an address past them all (in data, in
// a section without symbols) has no function, not the last one. An
// address in a PLT stub is named after the function the stub jumps to,
// name@plt (plt.go).
func (o *Object) Lookup(vaddr uint64) (Func, bool) {
	i := sort.Search(len(o.funcs), func(i int) bool { return o.funcs[i].Value > vaddr })
	if i == 0 {
		return o.lookupPLT(vaddr)
	}
	at := o.funcs[i-1].Value
	first := sort.Search(i, func(j int) bool { return o.funcs[j].Value >= at })
	// The best-ranked alias that contains vaddr.
	for j := first; j < i; j++ {
		f := o.funcs[j]
		if vaddr < f.limit() {
			return f, true
		}
	}
	// vaddr is past the end of the functions starting here; an enclosing
	// larger function may start earlier.
	for j := first - 1; j >= 0 && first-j < 64; j-- {
		f := o.funcs[j]
		if f.Size > 0 && vaddr < f.limit() {
			return f, true
		}
	}
	return o.lookupPLT(vaddr)
}

// SymbolValue returns the link-time address of a data or function
// symbol.
func (o *Object) SymbolValue(name string) (uint64, bool) {
	if v, ok := o.data[name]; ok {
		return v, true
	}
	for _, f := range o.funcs {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

// Sections returns the object's sections.
func (o *Object) Sections() []Section { return o.sections }

// Section returns the named section.
func (o *Object) Section(name string) (Section, bool) {
	for _, s := range o.sections {
		if s.Name == name {
			return s, true
		}
	}
	return Section{}, false
}

// FileOffset turns a link-time virtual address into an offset in the file,
// as uprobes and ref_ctr_offset want them.
func (o *Object) FileOffset(vaddr uint64) (uint64, bool) {
	for _, p := range o.loads {
		if p.Vaddr <= vaddr && vaddr < p.Vaddr+p.Filesz {
			return vaddr - p.Vaddr + p.Off, true
		}
	}
	// Semaphores of sys/sdt.h live in .probes, which is in a loaded
	// segment; an address only in a section header still translates.
	for _, s := range o.sections {
		if s.Addr != 0 && s.Addr <= vaddr && vaddr < s.Addr+s.Size {
			return vaddr - s.Addr + s.Offset, true
		}
	}
	return 0, false
}

// WritableOffset returns the file offset of the size bytes at the
// link-time address vaddr when they lie wholly within the file bytes of
// one writable loadable segment: where the kernel may write a USDT
// semaphore in the process's private copy of that segment. Any other
// address (code, read-only data, past the end of the segment's file
// bytes, or only in a section header) is refused.
func (o *Object) WritableOffset(vaddr, size uint64) (uint64, bool) {
	for _, p := range o.loads {
		if p.Flags&elf.PF_W == 0 || vaddr < p.Vaddr || size > p.Filesz || vaddr-p.Vaddr > p.Filesz-size {
			continue
		}
		return vaddr - p.Vaddr + p.Off, true
	}
	return 0, false
}

// Vaddr turns a file offset into the link-time virtual address it is
// loaded at.
func (o *Object) Vaddr(off uint64) (uint64, bool) {
	for _, p := range o.loads {
		if p.Off <= off && off < p.Off+p.Filesz {
			return off - p.Off + p.Vaddr, true
		}
	}
	return 0, false
}

// Notes returns the notes of the named section (".note.stapsdt"), nil
// when there is no such section.
func (o *Object) Notes(section string) ([]Note, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if n, ok := o.notes[section]; ok {
		return n, nil
	}
	s, ok := o.Section(section)
	if !ok {
		o.notes[section] = nil
		return nil, nil
	}
	notes, err := readFile(o.Path, section, func(f *os.File, size int64) ([]Note, error) { return readNotes(f, size, s, o.Class) })
	if err != nil {
		return nil, err
	}
	o.notes[section] = notes
	return notes, nil
}

// readFile opens the file at path and reads from it with read, given
// the file's size; read's error is reported with path and what.
func readFile[T any](path, what string, read func(f *os.File, size int64) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return zero, err
	}
	v, err := read(f, fi.Size())
	if err != nil {
		return zero, fmt.Errorf("%s: %s: %w", path, what, err)
	}
	return v, nil
}

// readNotes reads and splits a note section of a file of the given size.
// The section header's size is checked against the file before anything
// is allocated: a crafted header must not make us allocate gigabytes.
func readNotes(r io.ReaderAt, fileSize int64, s Section, class elf.Class) ([]Note, error) {
	buf, err := readRange(r, fileSize, s.Offset, s.Size)
	if err != nil {
		return nil, err
	}
	return parseNotes(buf, class)
}

// readRange reads size bytes at off of a file of fileSize bytes, refusing
// a range that is not within the file.
func readRange(r io.ReaderAt, fileSize int64, off, size uint64) ([]byte, error) {
	if fileSize < 0 || off > uint64(fileSize) || size > uint64(fileSize)-off {
		return nil, fmt.Errorf("range [%#x, +%#x) is outside the file (%d bytes)", off, size, fileSize)
	}
	buf := make([]byte, size)
	if size == 0 {
		return buf, nil
	}
	if _, err := r.ReadAt(buf, int64(off)); err != nil {
		return nil, err
	}
	return buf, nil
}

// parseNotes splits a note section: namesz, descsz, type (u32 each), then
// name and descriptor, each padded to 4 bytes; class is the file's.
func parseNotes(b []byte, class elf.Class) ([]Note, error) {
	var out []Note
	for len(b) > 0 {
		if len(b) < 12 {
			return nil, errors.New("truncated note")
		}
		namesz := int(le32(b))
		descsz := int(le32(b[4:]))
		typ := le32(b[8:])
		b = b[12:]
		nameEnd := align4(namesz)
		if namesz < 0 || descsz < 0 || nameEnd > len(b) || nameEnd+descsz > len(b) {
			return nil, errors.New("truncated note")
		}
		name := string(b[:namesz])
		if namesz > 0 && name[namesz-1] == 0 {
			name = name[:namesz-1]
		}
		desc := b[nameEnd : nameEnd+descsz]
		out = append(out, Note{Owner: name, Type: typ, Desc: desc, Class: class})
		next := nameEnd + align4(descsz)
		if next > len(b) {
			next = len(b)
		}
		b = b[next:]
	}
	return out, nil
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func align4(n int) int { return (n + 3) &^ 3 }

// fileKey identifies a file by device and inode, so that a library mapped
// by many processes, or reached through several paths, is read once.
type fileKey struct {
	dev, ino uint64
	mtime    int64
	size     int64
}

var (
	objMu    sync.Mutex
	objCache = map[fileKey]*objEntry{}
)

type objEntry struct {
	once sync.Once
	data *objectData
	err  error
}

// LoadObject returns the Object for the file at path, from a cache keyed
// by the file's identity.
func LoadObject(path string) (*Object, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	key := fileKey{mtime: fi.ModTime().UnixNano(), size: fi.Size()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		key.dev, key.ino = uint64(st.Dev), st.Ino
	}
	objMu.Lock()
	e := objCache[key]
	if e == nil {
		e = &objEntry{}
		objCache[key] = e
	}
	objMu.Unlock()
	e.once.Do(func() {
		var o *Object
		if o, e.err = OpenObject(path); e.err == nil {
			e.data = o.objectData
		}
	})
	if e.err != nil {
		return nil, e.err
	}
	// The file may have been reached through another path (the map_files
	// link of a process since gone): read it through this one.
	return &Object{Path: path, objectData: e.data}, nil
}

// ReadNotes reads the notes of one section of the ELF file at path
// without reading its symbols: a cheap test of whether a file has USDT
// probes at all. A file without the section gives nil.
func ReadNotes(path, section string) ([]Note, error) {
	f, err := openELF(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := f.Section(section)
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	b, err := s.Data()
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, section, err)
	}
	return parseNotes(b, f.Class)
}

// Executable reports whether vaddr lies in a loadable segment that is
// executable and not writable: where code can be probed.
func (o *Object) Executable(vaddr uint64) bool {
	for _, p := range o.loads {
		if p.Vaddr <= vaddr && vaddr < p.Vaddr+p.Filesz {
			return p.Flags&elf.PF_X != 0 && p.Flags&elf.PF_W == 0
		}
	}
	return false
}

// openELF opens the ELF file at path, which must be a regular file.
func openELF(path string) (*elf.File, error) {
	if err := regular(path); err != nil {
		return nil, err
	}
	return elf.Open(path)
}

// regular refuses a path that is not a regular file: a traced process
// names the files it maps, and a FIFO or a device there would block or
// feed the ELF reader forever.
func regular(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", path)
	}
	return nil
}
