package unwind

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/symbol"
)

// Maps keeps the unwind tables of one D program's maps (abi.MapUWFiles,
// MapUWTables, MapUWMiss) filled: tables for the files the stack walks
// meet, one table per distinct object shared by every file (and so every
// process) with its build id, bounded in total rows, dropped when unused.
type Maps struct {
	files, tables, miss *ebpf.Map
	opts                MapsOptions

	mu      sync.Mutex
	byKey   map[FileKey]*fileEntry
	byID    map[string]*table // by build id (or path when it has none)
	free    []uint32          // table indexes given back
	next    uint32            // next index never used (0 is "no table")
	rows    int               // rows loaded
	stats   Stats
	stop    chan struct{}
	stopped chan struct{}
}

// MapsOptions tune Maps.
type MapsOptions struct {
	// MaxRows bounds the rows of all tables loaded at once (16 bytes
	// each); 0 means DefaultMaxRows.
	MaxRows int
	// Idle is how long a file's table stays after the last walk through
	// it once no process known to map it is alive; 0 means 30 s.
	Idle time.Duration
	// Poll is how often the misses the probes note are served; 0
	// means 20 ms.
	Poll time.Duration
	// Warn reports, once per file, a table that could not be built.
	Warn func(string)
}

// DefaultMaxRows bounds the unwind tables to 64 MiB of rows.
const DefaultMaxRows = 1 << 22

// FileKey is a mapped file's identity as the kernel sees it.
type FileKey struct{ Dev, Ino uint64 }

type fileEntry struct {
	tab  *table // nil: no call-frame information (frame pointers)
	pids map[int]bool
	path string
	// retry is when a file that had no room is tried again.
	retry time.Time
}

type table struct {
	index uint32
	rows  int
	id    string
	refs  int
	inner *ebpf.Map
}

// Stats count what Maps did.
type Stats struct {
	Tables, Files, Rows int // loaded now
	Built, Shared       int // tables built; files that reused one
	Misses, Dropped     int // misses served; tables dropped
	Failed              int // files whose table could not be built
}

// NewMaps starts keeping the maps of a loaded program. The vdso's table
// is loaded at once; Close stops the background work.
func NewMaps(files, tables, miss *ebpf.Map, opts MapsOptions) *Maps {
	if opts.MaxRows <= 0 {
		opts.MaxRows = DefaultMaxRows
	}
	if opts.Idle <= 0 {
		opts.Idle = 30 * time.Second
	}
	if opts.Poll <= 0 {
		opts.Poll = 20 * time.Millisecond
	}
	m := &Maps{files: files, tables: tables, miss: miss, opts: opts,
		byKey: map[FileKey]*fileEntry{}, byID: map[string]*table{}, next: 1,
		stop: make(chan struct{}), stopped: make(chan struct{})}
	m.loadVdso()
	return m
}

// Start serves misses and drops unused tables in the background until
// Close.
func (m *Maps) Start() {
	go func() {
		defer close(m.stopped)
		poll := time.NewTicker(m.opts.Poll)
		defer poll.Stop()
		last := time.Now()
		for {
			select {
			case <-m.stop:
				return
			case <-poll.C:
			}
			m.ServeMisses()
			if time.Since(last) > m.opts.Idle/6 {
				m.Prune()
				last = time.Now()
			}
		}
	}()
}

// Close stops the background work; the maps go with the program.
func (m *Maps) Close() {
	select {
	case <-m.stop:
		return
	default:
	}
	close(m.stop)
	select {
	case <-m.stopped:
	case <-time.After(5 * time.Second):
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.byID {
		t.inner.Close()
	}
	m.byID = map[string]*table{}
}

// Stats returns the counts so far.
func (m *Maps) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.stats
	s.Tables, s.Files, s.Rows = len(m.byID), len(m.byKey), m.rows
	return s
}

// LoadProcess loads the tables of every object process pid maps now
// and, for a process held at exec (dtrace -c), of the libraries it will
// map (DT_NEEDED). With target set (the $target, whose first firings
// must not wait for a miss to be served), each is also filed under its
// inode number alone: stat cannot always say which device the kernel
// sees a mapped file on (overlayfs, as in containers, maps the layer's
// inode).
func (m *Maps) LoadProcess(pid int, target bool) error {
	p, err := symbol.ReadProcess(pid)
	if err != nil {
		return err
	}
	m.LoadSnapshot(p, target)
	return nil
}

// LoadSnapshot is LoadProcess from a snapshot of the process already
// taken (the one the symbolizer and the providers share).
func (m *Maps) LoadSnapshot(p *symbol.Process, target bool) {
	pid := p.PID
	load := func(path string) {
		if key, ok := m.loadPath(path, pid); ok && target {
			m.mu.Lock()
			m.file(FileKey{Dev: anyDev, Ino: key.Ino}, path, pid)
			m.mu.Unlock()
		}
	}
	for _, mod := range p.Modules() {
		load(p.OpenPath(mod))
	}
	for _, mod := range p.PendingModules() {
		load(mod.Path)
	}
}

// anyDev is abi.UWAnyDev as a key's device.
const anyDev = ^uint64(0)

// LoadAll loads the tables of every running process's objects.
func (m *Maps) LoadAll() {
	for _, pid := range symbol.PIDs() {
		select {
		case <-m.stop:
			return
		default:
		}
		_ = m.LoadProcess(pid, false)
	}
}

// loadPath files the object at path (as process pid maps it) under the
// identity stat gives it.
func (m *Maps) loadPath(path string, pid int) (FileKey, bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return FileKey{}, false
	}
	key := FileKey{Dev: kernelDev(st.Dev), Ino: st.Ino}
	m.mu.Lock()
	defer m.mu.Unlock()
	return key, m.file(key, path, pid) != nil
}

// kernelDev turns a user-space dev_t into the kernel's encoding (what
// super_block.s_dev holds): major << 20 | minor.
func kernelDev(d uint64) uint64 {
	return uint64(unix.Major(d))<<20 | uint64(unix.Minor(d))
}

// file makes sure key has its entry (and table) in the maps; m.mu held.
func (m *Maps) file(key FileKey, path string, pid int) *fileEntry {
	select {
	case <-m.stop:
		return nil // closed: the maps are going
	default:
	}
	if e := m.byKey[key]; e != nil && (e.tab != nil || e.retry.IsZero() || time.Now().Before(e.retry)) {
		if pid > 0 {
			e.pids[pid] = true
		}
		return e
	}
	e := &fileEntry{pids: map[int]bool{}, path: path}
	if pid > 0 {
		e.pids[pid] = true
	}
	t, err := m.table(path)
	switch {
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ESRCH):
		// The process (and its map_files) went away before the miss
		// was served: another walk will ask again.
		return nil
	case errors.Is(err, errFull):
		e.retry = time.Now().Add(m.opts.Idle / 6)
	case err != nil:
		m.stats.Failed++
		if m.opts.Warn != nil {
			m.opts.Warn(fmt.Sprintf("no unwind table for %s: %v", path, err))
		}
	}
	e.tab = t
	var v [abi.UWFileSize]byte
	if t != nil {
		binary.LittleEndian.PutUint32(v[abi.UWFileTable:], t.index)
		binary.LittleEndian.PutUint32(v[abi.UWFileRows:], uint32(t.rows))
		binary.LittleEndian.PutUint64(v[abi.UWFileUsed:], monotonic())
	}
	if err := m.files.Put(key.bytes(), v[:]); err != nil {
		m.release(t)
		return nil
	}
	if old := m.byKey[key]; old != nil {
		m.release(old.tab)
	}
	m.byKey[key] = e
	return e
}

var errFull = errors.New("unwind tables full")

// table returns the table of the object at path, building and loading it
// unless an object with its build id has one; m.mu held.
func (m *Maps) table(path string) (*table, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return m.tableOf(f, path)
}

func (m *Maps) tableOf(f *elf.File, path string) (*table, error) {
	id := BuildID(f)
	if id == "" {
		id = "path:" + path
	}
	if t := m.byID[id]; t != nil {
		t.refs++
		m.stats.Shared++
		return t, nil
	}
	tb, err := BuildObject(f, path)
	if err != nil {
		return nil, err
	}
	if len(tb.Rows) == 0 {
		return nil, errors.New("no call-frame information")
	}
	if m.rows+len(tb.Rows) > m.opts.MaxRows {
		m.evict(len(tb.Rows))
		if m.rows+len(tb.Rows) > m.opts.MaxRows {
			return nil, errFull
		}
	}
	index := m.next
	if n := len(m.free); n > 0 {
		index, m.free = m.free[n-1], m.free[:n-1]
	} else if m.next >= abi.UWTablesMax {
		return nil, errFull
	} else {
		m.next++
	}
	inner, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: abi.UWRowSize,
		MaxEntries: uint32(len(tb.Rows)), Flags: unix.BPF_F_INNER_MAP})
	if err == nil {
		err = fill(inner, tb)
	}
	if err == nil {
		err = m.tables.Put(index, inner)
	}
	if err != nil {
		if inner != nil {
			inner.Close()
		}
		m.free = append(m.free, index)
		return nil, err
	}
	t := &table{index: index, rows: len(tb.Rows), id: id, refs: 1, inner: inner}
	m.byID[id] = t
	m.rows += t.rows
	m.stats.Built++
	return t, nil
}

// fill writes the rows in batches.
func fill(inner *ebpf.Map, tb *Table) error {
	enc := tb.Encode()
	const batch = 4096
	for i := 0; i < len(tb.Rows); i += batch {
		n := min(batch, len(tb.Rows)-i)
		keys := make([]uint32, n)
		for j := range keys {
			keys[j] = uint32(i + j)
		}
		vals := enc[i*RowSize : (i+n)*RowSize]
		if _, err := inner.BatchUpdate(keys, vals, nil); err != nil {
			// Kernels without batch operations on arrays: one by one.
			for j := range keys {
				if err := inner.Put(keys[j], vals[j*RowSize:(j+1)*RowSize]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// release drops a reference to t, unloading it at the last; m.mu held.
func (m *Maps) release(t *table) {
	if t == nil {
		return
	}
	t.refs--
	if t.refs > 0 {
		return
	}
	_ = m.tables.Delete(t.index)
	t.inner.Close()
	m.free = append(m.free, t.index)
	m.rows -= t.rows
	delete(m.byID, t.id)
	m.stats.Dropped++
}

// ServeMisses builds the tables of the files the probes noted in
// dt_uw_miss and deletes the notes.
func (m *Maps) ServeMisses() {
	var k, v []byte
	type miss struct {
		key        FileKey
		start, end uint64
		tgid       int
	}
	var todo []miss
	it := m.miss.Iterate()
	for it.Next(&k, &v) {
		if len(k) < abi.UWFileKeySize || len(v) < abi.UWMissSize {
			continue
		}
		todo = append(todo, miss{
			key:   FileKey{binary.LittleEndian.Uint64(k[abi.UWFileKeyDev:]), binary.LittleEndian.Uint64(k[abi.UWFileKeyIno:])},
			start: binary.LittleEndian.Uint64(v[abi.UWMissStart:]),
			end:   binary.LittleEndian.Uint64(v[abi.UWMissEnd:]),
			tgid:  int(binary.LittleEndian.Uint64(v[abi.UWMissTgid:])),
		})
	}
	for _, x := range todo {
		path := fmt.Sprintf("/proc/%d/map_files/%x-%x", x.tgid, x.start, x.end)
		m.mu.Lock()
		m.file(x.key, path, x.tgid)
		m.stats.Misses++
		m.mu.Unlock()
		_ = m.miss.Delete(x.key.bytes())
	}
}

// Prune drops the files no live process is known to map and no walk has
// passed through for Idle, and the tables no file uses.
func (m *Maps) Prune() {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := monotonic()
	for key, e := range m.byKey {
		if len(e.pids) == 0 && key.Ino == abi.UWVdsoIno && key.Dev == 0 {
			continue // the vdso's table stays
		}
		alive := false
		for pid := range e.pids {
			if unix.Kill(pid, 0) == nil || errors.Is(unix.Kill(pid, 0), unix.EPERM) {
				alive = true
				break
			}
			delete(e.pids, pid)
		}
		if alive {
			continue
		}
		var v [abi.UWFileSize]byte
		if err := m.files.Lookup(key.bytes(), v[:]); err == nil {
			used := binary.LittleEndian.Uint64(v[abi.UWFileUsed:])
			if used != 0 && now-used < uint64(m.opts.Idle) {
				continue
			}
		}
		_ = m.files.Delete(key.bytes())
		delete(m.byKey, key)
		m.release(e.tab)
	}
}

// evict drops tables unused for the longest, to make room for need rows;
// only tables no walk used in the last Idle/6 go. m.mu held.
func (m *Maps) evict(need int) {
	now := monotonic()
	for m.rows+need > m.opts.MaxRows {
		var oldest FileKey
		var oldestUsed uint64
		found := false
		for key, e := range m.byKey {
			if e.tab == nil {
				continue
			}
			var v [abi.UWFileSize]byte
			if m.files.Lookup(key.bytes(), v[:]) != nil {
				continue
			}
			used := binary.LittleEndian.Uint64(v[abi.UWFileUsed:])
			if now-used < uint64(m.opts.Idle/6) {
				continue
			}
			if !found || used < oldestUsed {
				oldest, oldestUsed, found = key, used, true
			}
		}
		if !found {
			return
		}
		_ = m.files.Delete(oldest.bytes())
		m.release(m.byKey[oldest].tab)
		delete(m.byKey, oldest)
	}
}

func (k FileKey) bytes() []byte {
	var b [abi.UWFileKeySize]byte
	binary.LittleEndian.PutUint64(b[abi.UWFileKeyDev:], k.Dev)
	binary.LittleEndian.PutUint64(b[abi.UWFileKeyIno:], k.Ino)
	return b[:]
}

func monotonic() uint64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Nano())
}

// loadVdso files the table of the vdso, read from this process's
// memory: every process of this kernel maps the same image.
func (m *Maps) loadVdso() {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasSuffix(line, "[vdso]") {
			continue
		}
		var start, end uint64
		if _, err := fmt.Sscanf(line, "%x-%x", &start, &end); err != nil || end <= start || end-start > 1<<20 {
			return
		}
		mem, err := os.Open("/proc/self/mem")
		if err != nil {
			return
		}
		img := make([]byte, end-start)
		_, err = mem.ReadAt(img, int64(start))
		mem.Close()
		if err != nil {
			return
		}
		f, err := elf.NewFile(bytes.NewReader(img))
		if err != nil {
			return
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		t, err := m.tableOf(f, "[vdso]")
		if err != nil {
			return
		}
		key := FileKey{0, abi.UWVdsoIno}
		var v [abi.UWFileSize]byte
		binary.LittleEndian.PutUint32(v[abi.UWFileTable:], t.index)
		binary.LittleEndian.PutUint32(v[abi.UWFileRows:], uint32(t.rows))
		if m.files.Put(key.bytes(), v[:]) == nil {
			m.byKey[key] = &fileEntry{tab: t, pids: map[int]bool{}, path: "[vdso]"}
		}
		return
	}
}
