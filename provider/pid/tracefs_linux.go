//go:build linux

package pid

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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
	"github.com/dtrace-go/dtrace/provider"
)

// uprobeEventMin is the number of sites from which an attachment on a
// kernel without uprobe_multi shares one tracefs uprobe event rather than
// opening one perf event per site: below it, detaching one site at a
// time takes well under a second.
const uprobeEventMin = 32

// uprobeGroupPrefix begins the tracefs group of a dtrace process's uprobe
// events, followed by its process id.
const uprobeGroupPrefix = "dtrace_go_"

// A uprobeEvent is one tracefs uprobe event holding many probe points
// (the kernel appends probes of the same event name to one event), opened
// as one perf event in one process with the program attached. Closing it
// waits for one grace period, not one per site, and then removes the
// event from uprobe_events.
//
// A dtrace killed with SIGKILL cannot remove its events: the kernel closes
// the perf event, which removes every breakpoint and the program, but the
// event's definition stays in uprobe_events (nothing attached, nothing
// enabled). The next dtrace removes those of processes that are gone
// (sweepUprobeEvents).
type uprobeEvent struct {
	dir, group, name string
	fd               int
}

var (
	eventSeq   atomic.Uint64
	sweepOnce  sync.Once
	tracefsDir = sync.OnceValue(findTracefs)
)

// findTracefs returns the tracefs directory (mounting it if need be)
// where it has uprobe_events, or "".
func findTracefs() string {
	d, err := kernel.MountTracefs()
	if err != nil {
		return ""
	}
	if _, err := os.Stat(d + "/uprobe_events"); err != nil {
		return ""
	}
	return d
}

// errNoUprobeEvent says that the sites cannot share a tracefs event: no
// tracefs, or a path uprobe_events cannot spell.
var errNoUprobeEvent = errors.New("no tracefs uprobe event")

// openUprobeEvents puts the sites (sites[i] for i in idx) in tracefs
// uprobe events opened in process pid with prog attached: one event for
// them all or, where the kernel refuses a site (Unsupported: it cannot
// single-step or emulate the instruction), events of halves until each
// refused site is alone. Refused sites for which optional(i) is true are
// left out; another is a refusedError. Each failed try costs the kernel
// one grace period, so k refused sites of n cost some k*log2(n), unless
// they are Suspect: those are tried alone.
func openUprobeEvents(ctx context.Context, sites []Site, idx []int, optional func(int) bool, pid int, prog *ebpf.Program) (io.Closer, error) {
	var evs []io.Closer
	var try func(idx []int) error
	try = func(idx []int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ev, err := openUprobeEvent(sites, idx, pid, prog)
		switch {
		case err == nil:
			evs = append(evs, ev)
			return nil
		case !Unsupported(err):
			return err
		case len(idx) == 1 && optional(idx[0]):
			return nil
		case len(idx) == 1:
			return refusedError{fmt.Errorf("uprobe at %s+0x%x: %w", sites[idx[0]].Path, sites[idx[0]].FileOffset, err)}
		}
		h := len(idx) / 2
		if err := try(idx[:h]); err != nil {
			return err
		}
		return try(idx[h:])
	}
	// A site the kernel may refuse is tried alone: one refused site
	// among the others would cost log2(n) tries.
	var rest, suspect []int
	for _, i := range idx {
		if sites[i].Suspect {
			suspect = append(suspect, i)
		} else {
			rest = append(rest, i)
		}
	}
	groups := [][]int{rest}
	for _, i := range suspect {
		groups = append(groups, []int{i})
	}
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		if err := try(g); err != nil {
			provider.Closers(evs...).Close()
			return nil, err
		}
	}
	return provider.Closers(evs...), nil
}

// refusedError is the kernel's refusal of a site a probe cannot do
// without.
type refusedError struct{ error }

func (e refusedError) Unwrap() error { return e.error }

// openUprobeEvent puts the sites (sites[i] for i in idx) in one new
// tracefs uprobe event and opens it in process pid with prog attached.
func openUprobeEvent(sites []Site, idx []int, pid int, prog *ebpf.Program) (*uprobeEvent, error) {
	dir := tracefsDir()
	if dir == "" {
		return nil, errNoUprobeEvent
	}
	for _, i := range idx {
		if p := sites[i].Path; sites[i].RefCtrOffset != 0 || strings.ContainsAny(p, " \t\n\\") {
			return nil, errNoUprobeEvent
		}
	}
	sweepOnce.Do(func() { sweepUprobeEvents(dir) })
	e := &uprobeEvent{dir: dir, group: uprobeGroupPrefix + strconv.Itoa(os.Getpid()),
		name: fmt.Sprintf("s%d_%08x", eventSeq.Add(1), rand.Uint32()), fd: -1}
	f, err := os.OpenFile(dir+"/uprobe_events", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	// Whole lines in each write: the kernel parses each write alone.
	var buf []byte
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		_, err := f.Write(buf)
		buf = buf[:0]
		return err
	}
	for _, i := range idx {
		line := fmt.Sprintf("p:%s/%s %s:0x%x\n", e.group, e.name, sites[i].Path, sites[i].FileOffset)
		if len(buf)+len(line) > 4000 {
			if err = flush(); err != nil {
				break
			}
		}
		buf = append(buf, line...)
	}
	if err == nil {
		err = flush()
	}
	f.Close()
	if err != nil {
		e.remove()
		return nil, fmt.Errorf("uprobe_events: %w", err)
	}
	if err := e.open(pid, prog); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// open opens the event as a perf event in process pid and attaches prog.
func (e *uprobeEvent) open(pid int, prog *ebpf.Program) error {
	b, err := os.ReadFile(fmt.Sprintf("%s/events/%s/%s/id", e.dir, e.group, e.name))
	if err != nil {
		return err
	}
	id, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil {
		return fmt.Errorf("uprobe event id %q", b)
	}
	attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_TRACEPOINT, Config: id,
		Sample_type: unix.PERF_SAMPLE_RAW, Sample: 1, Wakeup: 1}
	attr.Size = uint32(unsafe.Sizeof(attr))
	fd, err := unix.PerfEventOpen(&attr, pid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
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

// Close closes the perf event (removing the breakpoints and the program)
// and removes the event.
func (e *uprobeEvent) Close() error {
	if e.fd >= 0 {
		unix.Close(e.fd)
		e.fd = -1
	}
	return e.remove()
}

// remove removes the event (all its probes) from uprobe_events.
func (e *uprobeEvent) remove() error {
	return removeUprobeEvents(e.dir, []string{e.group + "/" + e.name})
}

// removeUprobeEvents removes the events named group/name.
func removeUprobeEvents(dir string, names []string) error {
	f, err := os.OpenFile(dir+"/uprobe_events", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	var first error
	for _, n := range names {
		if _, err := f.Write([]byte("-:" + n + "\n")); err != nil && first == nil && !errors.Is(err, unix.ENOENT) {
			first = fmt.Errorf("remove uprobe event %s: %w", n, err)
		}
	}
	return first
}

// sweepUprobeEvents removes the uprobe events that dtrace processes now
// gone (killed with SIGKILL) left behind. The kernel refuses to remove an
// event that is open, so another dtrace's events in use are safe even
// where a process id names another process in another namespace.
func sweepUprobeEvents(dir string) {
	b, err := os.ReadFile(dir + "/uprobe_events")
	if err != nil {
		return
	}
	seen := map[string]bool{}
	var stale []string
	for _, l := range strings.Split(string(b), "\n") {
		// p:GROUP/EVENT PATH:OFFSET
		name, _, _ := strings.Cut(strings.TrimPrefix(l, "p:"), " ")
		group, _, ok := strings.Cut(name, "/")
		if !ok || seen[name] || !strings.HasPrefix(group, uprobeGroupPrefix) {
			continue
		}
		seen[name] = true
		pid, err := strconv.Atoi(group[len(uprobeGroupPrefix):])
		if err != nil || pid == os.Getpid() || unix.Kill(pid, 0) != unix.ESRCH {
			continue
		}
		stale = append(stale, name)
	}
	if len(stale) > 0 {
		removeUprobeEvents(dir, stale)
	}
}
