//go:build linux

package cpc

import (
	"io"
	"unsafe"

	"github.com/cilium/ebpf"
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

func attach(p *provider.Probe, c Counter, prog *ebpf.Program) (io.Closer, error) {
	cpus, err := kernel.OnlineCPUs()
	if err != nil {
		return nil, err
	}
	return provider.AttachPerfEvents(p, attr(c), cpus, prog)
}
