package symbol

import (
	"strings"
	"sync"
	"time"
)

// Symbolizer resolves kernel and user addresses for the output layer
// (format.Symbolizer). Kernel symbols are read on first use. A process's
// mappings are read when Snapshot is called for it, and then again while
// it lives (often at first, as a process held after exec maps its
// libraries as soon as it runs, then every 200ms), so that a process that
// exits before its records are consumed still resolves; a process never
// snapshot is read on its first lookup, and again on a lookup that misses.
// Following can be turned off (Follow) where no address will be asked
// about. It is safe for concurrent use.
type Symbolizer struct {
	mu       sync.Mutex
	procs    map[int]*procEntry
	watching map[int]bool
	// noFollow says that snapshots are not followed (Follow).
	noFollow bool
	perfMaps map[int]*perfMap
	// fetched holds the files whose debug files were looked for in the
	// background (with debuginfod), by path and inode.
	fetched map[fileID]bool
	closed  chan struct{}
	// kernel overrides KernelSymbols, for tests.
	kernel *Kallsyms
}

type procEntry struct {
	proc *Process
	read time.Time
}

// NewSymbolizer returns an empty Symbolizer.
func NewSymbolizer() *Symbolizer {
	return &Symbolizer{procs: map[int]*procEntry{}, watching: map[int]bool{}, perfMaps: map[int]*perfMap{},
		fetched: map[fileID]bool{}, closed: make(chan struct{})}
}

// Close stops following processes.
func (s *Symbolizer) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.closed:
	default:
		close(s.closed)
	}
}

// watch re-reads the mappings of pid until it exits or s is closed. A
// zombie's maps are empty: the last snapshot with mappings stays.
func (s *Symbolizer) watch(pid int) {
	wait := time.Millisecond
	for {
		select {
		case <-s.closed:
			return
		case <-time.After(wait):
		}
		if wait < 200*time.Millisecond {
			wait *= 2
		}
		p, err := ReadProcess(pid)
		if err != nil || len(p.Maps) == 0 {
			s.mu.Lock()
			delete(s.watching, pid)
			s.mu.Unlock()
			return
		}
		s.mu.Lock()
		changed := false
		if old := s.procs[pid]; old == nil || !sameMaps(old.proc, p) {
			s.procs[pid] = &procEntry{proc: p, read: time.Now()}
			changed = true
		}
		s.mu.Unlock()
		if changed {
			s.prefetch(p)
		}
	}
}

// sameMaps reports whether two snapshots map the same things, so that a
// snapshot whose modules are already resolved is kept.
func sameMaps(a, b *Process) bool {
	if len(a.Maps) != len(b.Maps) {
		return false
	}
	for i := range a.Maps {
		x, y := a.Maps[i], b.Maps[i]
		if x.Start != y.Start || x.End != y.End || x.Inode != y.Inode || x.Path != y.Path {
			return false
		}
	}
	return true
}

// Snapshot reads the mappings of pid now, so that its addresses resolve
// after it exits. Call it for the -c/-p target and every process a probe
// names. A nil Symbolizer only reads the process.
func (s *Symbolizer) Snapshot(pid int) (*Process, error) {
	p, err := ReadProcess(pid)
	if err != nil || s == nil {
		return p, err
	}
	s.mu.Lock()
	s.procs[pid] = &procEntry{proc: p, read: time.Now()}
	if !s.noFollow && !s.watching[pid] {
		s.watching[pid] = true
		go s.watch(pid)
	}
	s.mu.Unlock()
	s.prefetch(p)
	return p, nil
}

// Follow says whether the processes Snapshot is called for are followed
// while they live (NewSymbolizer's default): a program that names no
// user address leaves them alone, as there is nothing to resolve, and
// the pid and USDT providers take their snapshots all the same. Turning
// it on follows the processes snapshot so far too.
func (s *Symbolizer) Follow(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noFollow = !on
	if !on {
		return
	}
	for pid := range s.procs {
		if !s.watching[pid] {
			s.watching[pid] = true
			go s.watch(pid)
		}
	}
}

// Process returns the snapshot of pid, taking one if there is none (a
// nil Symbolizer reads the process every time).
func (s *Symbolizer) Process(pid int) (*Process, error) {
	if s == nil {
		return ReadProcess(pid)
	}
	s.mu.Lock()
	e := s.procs[pid]
	s.mu.Unlock()
	if e != nil {
		return e.proc, nil
	}
	return s.Snapshot(pid)
}

// KernelSym resolves a kernel address to module`function+offset.
func (s *Symbolizer) KernelSym(addr uint64) (mod, fn string, off uint64, ok bool) {
	k := s.kernel
	if k == nil {
		var err error
		if k, err = KernelSymbols(); err != nil {
			return "", "", 0, false
		}
	}
	return k.Lookup(addr)
}

// KernelModBase returns the lowest address of the kernel module holding
// addr (format.ModuleBaser), so that mod() aggregation keys aggregate per
// module.
func (s *Symbolizer) KernelModBase(addr uint64) (uint64, bool) {
	k := s.kernel
	if k == nil {
		var err error
		if k, err = KernelSymbols(); err != nil {
			return 0, false
		}
	}
	return k.ModuleBase(addr)
}

// UserModBase returns the lowest address at which process pid maps the
// file holding addr (format.ModuleBaser), so that umod() aggregation keys
// aggregate per module.
func (s *Symbolizer) UserModBase(pid int, addr uint64) (uint64, bool) {
	p := s.lookupProcess(pid, addr)
	if p == nil {
		return 0, false
	}
	if m := p.Mapping(addr); m != nil && m.Path == vdsoName {
		return m.Start, true
	}
	mod := p.Module(addr)
	if mod == nil || len(mod.Maps) == 0 {
		return 0, false
	}
	base := mod.Maps[0].Start
	for _, m := range mod.Maps {
		base = min(base, m.Start)
	}
	return base, true
}

// UserSym resolves an address of process pid to the path of the object
// mapped there, the function and the offset into it. A known object with
// no symbol for addr (a stripped library) gives an empty fn.
func (s *Symbolizer) UserSym(pid int, addr uint64) (obj, fn string, off uint64, ok bool) {
	var r *resolvedModule
	if p := s.lookupProcess(pid, addr); p != nil {
		r = p.resolve(addr)
	}
	if r == nil {
		// Not in a mapped file: code a JIT generated, named by the
		// process's perf map if it writes one.
		return s.jitSym(pid, addr)
	}
	if r.obj == nil {
		return r.path, "", 0, true
	}
	f, ok := r.obj.Lookup(addr - r.bias)
	if !ok {
		return r.path, "", 0, true
	}
	return r.path, f.Name, addr - r.bias - f.Value, true
}

// UserLine returns the source file and line of address addr of process
// pid (format.LineSymbolizer), from the DWARF of the object mapped there
// or of its debug file. For a return address, ask for addr-1: the call.
func (s *Symbolizer) UserLine(pid int, addr uint64) (file string, line int, ok bool) {
	p := s.lookupProcess(pid, addr)
	if p == nil {
		return "", 0, false
	}
	r := p.resolve(addr)
	if r == nil || r.obj == nil {
		return "", 0, false
	}
	return r.obj.Line(addr - r.bias)
}

// jitSym names addr of process pid from its perf map: the map's path,
// the function and the offset into it.
func (s *Symbolizer) jitSym(pid int, addr uint64) (obj, fn string, off uint64, ok bool) {
	if pid <= 0 {
		return "", "", 0, false
	}
	s.mu.Lock()
	m := s.perfMaps[pid]
	if m == nil {
		m = &perfMap{}
		s.perfMaps[pid] = m
	}
	s.mu.Unlock()
	sym, ok := m.lookup(pid, addr)
	if !ok {
		return "", "", 0, false
	}
	return m.path, sym.Name, addr - sym.Start, true
}

// fileID identifies a mapped file for prefetch.
type fileID struct {
	path  string
	inode uint64
}

// prefetch starts, in the background, reading the objects p maps whose
// debug files debuginfod may have to send, so that the network is
// waited for while tracing and not when the names are printed (and
// never in a probe's path). Without DEBUGINFOD_URLS it does nothing:
// objects are read when first needed.
func (s *Symbolizer) prefetch(p *Process) {
	if defaultDebuginfod() == nil {
		return
	}
	for _, mod := range p.Modules() {
		id := fileID{mod.Path, mod.Maps[0].Inode}
		s.mu.Lock()
		seen := s.fetched[id]
		s.fetched[id] = true
		s.mu.Unlock()
		if !seen {
			go LoadObject(p.OpenPath(mod))
		}
	}
}

// UserMapping finds the mapping of a file that holds address addr of
// process pid: the file's path and the mapping's start.
func (s *Symbolizer) UserMapping(pid int, addr uint64) (obj string, start uint64, ok bool) {
	p := s.lookupProcess(pid, addr)
	if p == nil {
		return "", 0, false
	}
	m := p.Mapping(addr)
	if m == nil || !strings.HasPrefix(m.Path, "/") {
		return "", 0, false
	}
	return m.Path, m.Start, true
}

// lookupProcess returns the snapshot of pid that maps addr, re-reading
// the mappings when addr is not mapped in the snapshot (and the last read
// is not brand new).
func (s *Symbolizer) lookupProcess(pid int, addr uint64) *Process {
	s.mu.Lock()
	e := s.procs[pid]
	s.mu.Unlock()
	if e != nil && (e.proc.Mapping(addr) != nil || time.Since(e.read) < 10*time.Millisecond) {
		return e.proc
	}
	p, err := ReadProcess(pid)
	if err != nil {
		if e == nil {
			return nil
		}
		// Gone: keep the snapshot and stop asking for a while.
		s.mu.Lock()
		s.procs[pid] = &procEntry{proc: e.proc, read: time.Now()}
		s.mu.Unlock()
		return e.proc
	}
	s.mu.Lock()
	s.procs[pid] = &procEntry{proc: p, read: time.Now()}
	s.mu.Unlock()
	s.prefetch(p)
	return p
}
