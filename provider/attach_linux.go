package provider

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/kernel"
)

// AttachTracepoint links prog to the tracefs event group:name through a
// perf event, for probe p; closing the result detaches it.
func AttachTracepoint(p *Probe, group, name string, prog *ebpf.Program) (io.Closer, error) {
	return AttachTracepointCookie(p, group, name, prog, 0)
}

// AttachTracepointCookie is AttachTracepoint with a BPF cookie, which the
// program reads with bpf_get_attach_cookie (kernels 5.15 and later); 0
// attaches without one.
func AttachTracepointCookie(p *Probe, group, name string, prog *ebpf.Program, cookie uint64) (io.Closer, error) {
	// cilium/ebpf finds the event id in tracefs, which must be mounted.
	if _, err := kernel.MountTracefs(); err != nil {
		return nil, err
	}
	var opts *link.TracepointOptions
	if cookie != 0 {
		opts = &link.TracepointOptions{Cookie: cookie}
	}
	l, err := link.Tracepoint(group, name, prog, opts)
	if err != nil {
		return nil, fmt.Errorf("attach %s to %s:%s: %w", p, group, name, err)
	}
	return l, nil
}

// AttachRawTracepoint links prog to the raw tracepoint name, for probe p
// (group names the tracepoint's group in errors); closing the result
// detaches it.
func AttachRawTracepoint(p *Probe, group, name string, prog *ebpf.Program) (io.Closer, error) {
	l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: name, Program: prog})
	if err != nil {
		return nil, fmt.Errorf("attach %s to %s:%s: %w", p, group, name, err)
	}
	return l, nil
}

// RaiseFileLimit makes room for n more open files: a kprobe or uprobe
// link without a multi link holds a perf event and a link, and fbt:::entry
// is some 40,000 kprobes where the usual limit is 1,024 (soft) or 4,096
// (hard). Root may raise both up to
// fs.nr_open; if it cannot, attaching says "too many open files".
func RaiseFileLimit(n int) {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil {
		return
	}
	want := lim.Cur + uint64(n) + 256
	if want <= lim.Cur {
		return
	}
	old := lim.Max
	if want > lim.Max {
		max := want
		if data, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
			if v, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64); err == nil && v < max {
				max = v
			}
		}
		if max > lim.Max {
			lim.Max = max
		}
	}
	lim.Cur = min(want, lim.Max)
	if unix.Setrlimit(unix.RLIMIT_NOFILE, &lim) != nil && lim.Max > old {
		// Not allowed to raise the hard limit: up to it, then.
		lim.Max = old
		lim.Cur = min(want, old)
		unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
	}
}

// ParallelClosers closes many kprobe or uprobe links, a few at a time:
// each waits for the kernel to unregister its probe.
type ParallelClosers []io.Closer

// Close closes them all, four at a time, and reports their errors.
func (ls ParallelClosers) Close() error {
	const workers = 4
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(ls); i += workers {
				if err := ls[i].Close(); err != nil && errs[w] == nil {
					errs[w] = err
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// AttachKprobe links prog to a kprobe on the entry of the kernel
// function fn with a BPF cookie (0: none), for probe p; closing the result
// detaches it.
func AttachKprobe(p *Probe, fn string, prog *ebpf.Program, cookie uint64) (io.Closer, error) {
	var opts *link.KprobeOptions
	if cookie != 0 {
		opts = &link.KprobeOptions{Cookie: cookie}
	}
	l, err := link.Kprobe(fn, prog, opts)
	if err != nil {
		return nil, fmt.Errorf("attach %s to kprobe %s: %w", p, fn, err)
	}
	return l, nil
}

// AttachPerfEvents opens a perf event of attr on each of cpus (for every
// process) and links prog to each with BPF_LINK_CREATE, for probe p;
// closing the result detaches the program and closes the events.
func AttachPerfEvents(p *Probe, attr unix.PerfEventAttr, cpus []int, prog *ebpf.Program) (io.Closer, error) {
	var cs []io.Closer
	for _, cpu := range cpus {
		fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			Closers(cs...).Close()
			return nil, fmt.Errorf("attach %s on CPU %d: perf_event_open: %w", p, cpu, err)
		}
		l, err := link.AttachRawLink(link.RawLinkOptions{Target: fd, Program: prog, Attach: ebpf.AttachPerfEvent})
		if err != nil {
			unix.Close(fd)
			Closers(cs...).Close()
			return nil, fmt.Errorf("attach %s on CPU %d: link perf event: %w", p, cpu, err)
		}
		// Closers closes in reverse: the link before its event.
		cs = append(cs, FD(fd), l)
	}
	return Closers(cs...), nil
}

// FD is an open file descriptor (a perf event's, a raw link's) as an
// io.Closer.
type FD int

// Close closes the descriptor.
func (fd FD) Close() error { return unix.Close(int(fd)) }
