package symbol

import (
	"sync"
	"time"
)

// Symbolizer resolves kernel and user addresses for the output layer
// (format.Symbolizer). Kernel symbols are read on first use. A process's
// mappings are read when Snapshot is called for it, or on its first
// lookup; a lookup that misses (a library loaded later) reads them again
// while the process lives, at most once a second. It is safe for
// concurrent use.
type Symbolizer struct {
	mu    sync.Mutex
	procs map[int]*procEntry
	// kernel overrides KernelSymbols, for tests.
	kernel *Kallsyms
}

type procEntry struct {
	proc *Process
	read time.Time
}

// NewSymbolizer returns an empty Symbolizer.
func NewSymbolizer() *Symbolizer {
	return &Symbolizer{procs: map[int]*procEntry{}}
}

// Snapshot reads the mappings of pid now, so that its addresses resolve
// after it exits. Call it for the -c/-p target and every process a probe
// names.
func (s *Symbolizer) Snapshot(pid int) (*Process, error) {
	p, err := ReadProcess(pid)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.procs[pid] = &procEntry{proc: p, read: time.Now()}
	s.mu.Unlock()
	return p, nil
}

// Process returns the snapshot of pid, taking one if there is none.
func (s *Symbolizer) Process(pid int) (*Process, error) {
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

// UserSym resolves an address of process pid to the path of the object
// mapped there, the function and the offset into it. A known object with
// no symbol for addr (a stripped library) gives an empty fn.
func (s *Symbolizer) UserSym(pid int, addr uint64) (obj, fn string, off uint64, ok bool) {
	p := s.lookupProcess(pid, addr)
	if p == nil {
		return "", "", 0, false
	}
	r := p.resolve(addr)
	if r == nil {
		return "", "", 0, false
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

// lookupProcess returns the snapshot of pid that maps addr, re-reading
// the mappings when addr is not mapped in the snapshot and the last read
// is more than a second old.
func (s *Symbolizer) lookupProcess(pid int, addr uint64) *Process {
	s.mu.Lock()
	e := s.procs[pid]
	s.mu.Unlock()
	if e != nil && (e.proc.Mapping(addr) != nil || time.Since(e.read) < time.Second) {
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
	return p
}
