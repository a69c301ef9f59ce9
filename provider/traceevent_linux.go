package provider

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/kernel"
)

// Dynamic trace events holding many probe points. A uprobe or kprobe perf
// event waits for an RCU grace period under the kernel's event_mutex when
// its last perf event closes, one close after the other: thousands of
// them take minutes to detach. That wait is per trace event, not per
// probe point, and tracefs appends the probe points of one event name
// (lines "p:GROUP/EVENT SPEC" in uprobe_events or kprobe_events) to one
// event, which one perf event opens. The pid provider uses this where
// the kernel has no uprobe_multi link; the program then finds its probe
// by the address (the single perf event has one cookie). kprobes gain
// nothing from it: removing each kprobe probe point from its event waits
// for a grace period of its own (unregister_kprobe), so 74 vfs_*
// functions in one event took as long to detach in the 6.1 guest as 74
// perf events.
//
// A dtrace killed with SIGKILL cannot remove its events: the kernel closes
// the perf event, which disarms every probe point and drops the program,
// but the event's definition stays in tracefs (nothing attached, nothing
// enabled). The next dtrace removes those of processes that are gone.

// A TraceEvent is one dynamic trace event of this process in the tracefs
// file named (uprobe_events, kprobe_events).
type TraceEvent struct {
	dir, file, group, name string
	fd                     int
	buf                    []byte
}

var (
	traceEventSeq atomic.Uint64
	sweepMu       sync.Mutex
	swept         = map[string]bool{}
	tracefsDir    = sync.OnceValues(kernel.MountTracefs)
)

// NewTraceEvent names a new event in file (uprobe_events or
// kprobe_events), first removing the events dtrace processes now gone
// left in it. It fails where tracefs or the file is missing.
func NewTraceEvent(file string) (*TraceEvent, error) {
	dir, err := tracefsDir()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir + "/" + file); err != nil {
		return nil, err
	}
	sweepMu.Lock()
	if !swept[file] {
		swept[file] = true
		sweepTraceEvents(dir, file)
	}
	sweepMu.Unlock()
	return &TraceEvent{dir: dir, file: file, group: TraceEventGroupPrefix + strconv.Itoa(os.Getpid()),
		name: fmt.Sprintf("s%d_%08x", traceEventSeq.Add(1), rand.Uint32()), fd: -1}, nil
}

// Add queues probe points (SPEC: PATH:OFFSET for uprobes, an address or
// symbol for kprobes), written by Flush or the next Add that fills a
// page: the kernel parses each write alone, so writes hold whole lines.
func (e *TraceEvent) Add(specs ...string) error {
	for _, s := range specs {
		line := "p:" + e.group + "/" + e.name + " " + s + "\n"
		if len(e.buf)+len(line) > 4000 {
			if err := e.Flush(); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, line...)
	}
	return nil
}

// Flush writes the queued probe points. Where the kernel refuses one
// (an address kprobes may not probe), the error is its.
func (e *TraceEvent) Flush() error {
	if len(e.buf) == 0 {
		return nil
	}
	f, err := os.OpenFile(e.dir+"/"+e.file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(e.buf)
	e.buf = e.buf[:0]
	f.Close()
	return err
}

// Open flushes the probe points and opens the event as a perf event
// (pid -1 and cpu 0: every process; the program runs on every CPU), with
// prog attached and enabled. That arms every probe point.
func (e *TraceEvent) Open(pid, cpu int, prog *ebpf.Program) error {
	if err := e.Flush(); err != nil {
		return fmt.Errorf("%s: %w", e.file, err)
	}
	b, err := os.ReadFile(fmt.Sprintf("%s/events/%s/%s/id", e.dir, e.group, e.name))
	if err != nil {
		return err
	}
	id, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil {
		return fmt.Errorf("trace event id %q", b)
	}
	attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_TRACEPOINT, Config: id,
		Sample_type: unix.PERF_SAMPLE_RAW, Sample: 1, Wakeup: 1}
	attr.Size = uint32(unsafe.Sizeof(attr))
	fd, err := unix.PerfEventOpen(&attr, pid, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("perf_event_open: %w", err)
	}
	e.fd = fd
	if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_BPF, prog.FD()); err != nil {
		return fmt.Errorf("attach program: %w", err)
	}
	if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_ENABLE, 0); err != nil {
		return fmt.Errorf("enable: %w", err)
	}
	return nil
}

// Close closes the perf event (disarming the probe points and dropping
// the program) and removes the event.
func (e *TraceEvent) Close() error {
	if e.fd >= 0 {
		unix.Close(e.fd)
		e.fd = -1
	}
	e.buf = nil
	return removeTraceEvents(e.dir, e.file, []string{e.group + "/" + e.name})
}

// removeTraceEvents removes the events named group/name from file.
func removeTraceEvents(dir, file string, names []string) error {
	f, err := os.OpenFile(dir+"/"+file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	var first error
	for _, n := range names {
		if _, err := f.Write([]byte("-:" + n + "\n")); err != nil && first == nil && !errors.Is(err, unix.ENOENT) {
			first = fmt.Errorf("remove trace event %s: %w", n, err)
		}
	}
	return first
}

// sweepTraceEvents removes from file the events that dtrace processes now
// gone (killed with SIGKILL) left behind. The kernel refuses to remove an
// event that is open, so another dtrace's events in use are safe even
// where a process id names another process in another namespace.
func sweepTraceEvents(dir, file string) {
	b, err := os.ReadFile(dir + "/" + file)
	if err != nil {
		return
	}
	seen := map[string]bool{}
	var stale []string
	for _, l := range strings.Split(string(b), "\n") {
		// p:GROUP/EVENT SPEC (r: for return probes)
		_, l, _ = strings.Cut(l, ":")
		name, _, _ := strings.Cut(l, " ")
		group, _, ok := strings.Cut(name, "/")
		if !ok || seen[name] || !strings.HasPrefix(group, TraceEventGroupPrefix) {
			continue
		}
		seen[name] = true
		pid, err := strconv.Atoi(group[len(TraceEventGroupPrefix):])
		if err != nil || pid == os.Getpid() || unix.Kill(pid, 0) != unix.ESRCH {
			continue
		}
		stale = append(stale, name)
	}
	if len(stale) > 0 {
		removeTraceEvents(dir, file, stale)
	}
}

// ProgramMap returns the map named name (as the kernel has it) that prog
// uses, or nil if it uses none; the caller closes it.
func ProgramMap(prog *ebpf.Program, name string) (*ebpf.Map, error) {
	info, err := prog.Info()
	if err != nil {
		return nil, err
	}
	ids, ok := info.MapIDs()
	if !ok {
		return nil, errors.New("the kernel does not tell a program's maps")
	}
	for _, id := range ids {
		m, err := ebpf.NewMapFromID(id)
		if err != nil {
			return nil, err
		}
		if mi, err := m.Info(); err == nil && mi.Name == name {
			return m, nil
		}
		m.Close()
	}
	return nil, nil
}
