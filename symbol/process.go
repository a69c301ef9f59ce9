package symbol

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Mapping is one line of /proc/PID/maps.
type Mapping struct {
	Start, End uint64
	Perms      string // "r-xp"
	Offset     uint64
	Dev        string // "fe:00"
	Inode      uint64
	Path       string // "" for anonymous memory, "[heap]" and the like
}

// Exec reports whether the mapping is executable.
func (m *Mapping) Exec() bool { return len(m.Perms) > 2 && m.Perms[2] == 'x' }

// File reports whether the mapping is backed by a file.
func (m *Mapping) File() bool { return m.Inode != 0 && strings.HasPrefix(m.Path, "/") }

// Process is a snapshot of a process's mappings. It keeps answering after
// the process has exited.
type Process struct {
	PID int
	// Exe is the path of the executable (the a.out module).
	Exe  string
	Maps []Mapping // sorted by Start

	mu       sync.Mutex
	resolved map[string]*resolvedModule // by path
	// pending is PendingModules' answer once pendingDone is set.
	pending     []*Module
	pendingDone bool
}

// resolvedModule is a module with its ELF object and load bias, worked
// out once per process for the symbolizer.
type resolvedModule struct {
	path string
	obj  *Object // nil when the file cannot be read
	bias uint64
}

// resolve returns the module mapping addr with its object and bias.
func (p *Process) resolve(addr uint64) *resolvedModule {
	m := p.Mapping(addr)
	if m == nil || !m.File() && m.Path != vdsoName {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.resolved[m.Path]; ok {
		return r
	}
	if p.resolved == nil {
		p.resolved = map[string]*resolvedModule{}
	}
	if m.Path == vdsoName {
		r := resolveVdso(m)
		p.resolved[m.Path] = r
		return r
	}
	r := &resolvedModule{path: m.Path}
	p.resolved[m.Path] = r
	mod := p.Module(addr)
	if o, err := LoadObject(p.OpenPath(mod)); err == nil {
		if bias, ok := p.Bias(mod, o); ok {
			r.obj, r.bias = o, bias
		}
	}
	return r
}

// ReadProcess snapshots /proc/PID/maps and the executable's path.
func ReadProcess(pid int) (*Process, error) {
	reads.maps.Add(1)
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
		}
		return nil, err
	}
	defer f.Close()
	maps, err := ParseMaps(f)
	if err != nil {
		return nil, fmt.Errorf("/proc/%d/maps: %w", pid, err)
	}
	p := &Process{PID: pid, Maps: maps}
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil {
		p.Exe = strings.TrimSuffix(exe, " (deleted)")
	}
	return p, nil
}

// PIDs returns the ids of the processes /proc lists (none where it
// cannot be read).
func PIDs() []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// ErrNoProcess says that a process does not exist.
var ErrNoProcess = fmt.Errorf("no such process")

// ParseMaps parses the /proc/PID/maps format.
func ParseMaps(r io.Reader) ([]Mapping, error) {
	var out []Mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		// start-end perms offset dev inode [path]; the path may hold spaces.
		var fields [5]string
		rest := line
		for i := range fields {
			rest = bytes.TrimLeft(rest, " ")
			sp := bytes.IndexByte(rest, ' ')
			if sp < 0 {
				sp = len(rest)
			}
			fields[i] = string(rest[:sp])
			rest = rest[sp:]
		}
		dash := strings.IndexByte(fields[0], '-')
		if dash < 0 {
			return nil, fmt.Errorf("bad line %q", line)
		}
		var m Mapping
		var err1, err2, err3, err4 error
		m.Start, err1 = strconv.ParseUint(fields[0][:dash], 16, 64)
		m.End, err2 = strconv.ParseUint(fields[0][dash+1:], 16, 64)
		m.Perms = fields[1]
		m.Offset, err3 = strconv.ParseUint(fields[2], 16, 64)
		m.Dev = fields[3]
		m.Inode, err4 = strconv.ParseUint(fields[4], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			return nil, fmt.Errorf("bad line %q", line)
		}
		m.Path = strings.TrimSuffix(string(bytes.TrimLeft(rest, " ")), " (deleted)")
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out, nil
}

// Mapping returns the mapping that contains addr, or nil.
func (p *Process) Mapping(addr uint64) *Mapping {
	i := sort.Search(len(p.Maps), func(i int) bool { return p.Maps[i].End > addr })
	if i < len(p.Maps) && p.Maps[i].Start <= addr {
		return &p.Maps[i]
	}
	return nil
}

// Module is one ELF file mapped by a process: its path, the name dtrace
// gives it (the path's base name) and the mappings of its file.
type Module struct {
	Path string
	Name string
	// IsExe marks the executable, which the pid provider also calls a.out.
	IsExe bool
	Maps  []Mapping
}

// Modules returns the files that the process maps executable code from,
// in address order, each once.
func (p *Process) Modules() []*Module {
	var out []*Module
	byPath := map[string]*Module{}
	for _, m := range p.Maps {
		if !m.File() {
			continue
		}
		mod := byPath[m.Path]
		if mod == nil {
			mod = &Module{Path: m.Path, Name: path.Base(m.Path), IsExe: m.Path == p.Exe}
			byPath[m.Path] = mod
		}
		mod.Maps = append(mod.Maps, m)
	}
	for _, m := range p.Maps {
		if mod := byPath[m.Path]; mod != nil && m.Exec() {
			out = append(out, mod)
			delete(byPath, m.Path)
		}
	}
	return out
}

// OpenPath returns a path through which the module's file can be opened
// even if it has since been replaced or deleted, or the process lives in
// another mount namespace: /proc/PID/map_files/START-END names the very
// inode mapped. It falls back to /proc/PID/root/PATH and then to PATH.
func (p *Process) OpenPath(mod *Module) string {
	for _, m := range mod.Maps {
		if m.Exec() {
			mf := fmt.Sprintf("/proc/%d/map_files/%x-%x", p.PID, m.Start, m.End)
			if _, err := os.Stat(mf); err == nil {
				return mf
			}
		}
	}
	root := fmt.Sprintf("/proc/%d/root%s", p.PID, mod.Path)
	if _, err := os.Stat(root); err == nil {
		return root
	}
	return mod.Path
}

// Bias returns what to add to a link-time address of obj to get its
// address in this process. A mapping at file offset O holds the segment
// whose file offset lies in the same page as O (segments are mapped page
// by page), so the segment's Vaddr sits at Start+(seg.Off-O). Executable
// mappings are tried first, as those are the ones the providers probe.
func (p *Process) Bias(mod *Module, obj *Object) (uint64, bool) {
	for pass := 0; pass < 2; pass++ {
		for _, m := range mod.Maps {
			if (pass == 0) != m.Exec() {
				continue
			}
			for _, seg := range obj.loads {
				if seg.Off >= m.Offset && seg.Off-m.Offset < pageSize && seg.Off-m.Offset < m.End-m.Start {
					return m.Start + (seg.Off - m.Offset) - seg.Vaddr, true
				}
			}
		}
	}
	return 0, false
}

// pageSize bounds the distance between a mapping's offset and the
// segment it maps; 4 KiB on x86-64, and larger pages only loosen it.
const pageSize = 1 << 16

// Module returns the module that maps addr, or nil.
func (p *Process) Module(addr uint64) *Module {
	m := p.Mapping(addr)
	if m == nil || !m.File() {
		return nil
	}
	for _, mod := range p.Modules() {
		if mod.Path == m.Path {
			return mod
		}
	}
	return &Module{Path: m.Path, Name: path.Base(m.Path), IsExe: m.Path == p.Exe, Maps: []Mapping{*m}}
}
