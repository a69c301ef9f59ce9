//go:build linux

package cpc

import (
	"fmt"
	"io"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/provider"
)

// attr returns the perf event attributes of a counter.
func attr(c Counter) unix.PerfEventAttr {
	a := unix.PerfEventAttr{
		Type:   c.Type,
		Config: c.Config,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Sample: c.Count,
	}
	switch c.Mode {
	case User:
		a.Bits |= unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv
	case Kernel:
		a.Bits |= unix.PerfBitExcludeUser
	}
	return a
}

// canCount reports whether a perf event of the type and config opens on
// the first CPU.
func canCount(typ uint32, config uint64) bool {
	a := attr(Counter{Type: typ, Config: config, Count: listCount})
	fd, err := unix.PerfEventOpen(&a, -1, 0, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// perfFD closes a perf event file descriptor.
type perfFD int

func (fd perfFD) Close() error { return unix.Close(int(fd)) }

func attach(p *provider.Probe, c Counter, prog *ebpf.Program) (io.Closer, error) {
	cpus, err := kernel.OnlineCPUs()
	if err != nil {
		return nil, err
	}
	var cs []io.Closer
	for _, cpu := range cpus {
		a := attr(c)
		fd, err := unix.PerfEventOpen(&a, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			provider.Closers(cs...).Close()
			return nil, fmt.Errorf("attach %s on CPU %d: perf_event_open: %w", p, cpu, err)
		}
		l, err := link.AttachRawLink(link.RawLinkOptions{Target: fd, Program: prog, Attach: ebpf.AttachPerfEvent})
		if err != nil {
			unix.Close(fd)
			provider.Closers(cs...).Close()
			return nil, fmt.Errorf("attach %s on CPU %d: link perf event: %w", p, cpu, err)
		}
		// The link closes before its event.
		cs = append(cs, perfFD(fd), l)
	}
	return provider.Closers(cs...), nil
}
