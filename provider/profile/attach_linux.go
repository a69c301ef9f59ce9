package profile

import (
	"fmt"
	"io"
	"slices"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/provider"
)

// Attach opens a cpu-clock perf event with the probe's period on every
// online CPU (profile) or on the first one (tick), or on the CPU chosen
// with ChooseCPU, and links the program to each with BPF_LINK_CREATE.
func (pv *Provider) Attach(p *provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	r, ok := p.Data.(Rate)
	if !ok {
		return nil, fmt.Errorf("profile: probe %s was not made by this provider", p)
	}
	cpus, err := kernel.OnlineCPUs()
	if err != nil {
		return nil, err
	}
	switch {
	case pv.cpu >= 0:
		if !slices.Contains(cpus, pv.cpu) {
			return nil, fmt.Errorf("attach %s: CPU %d is not online", p, pv.cpu)
		}
		cpus = []int{pv.cpu}
	case r.Kind == Tick:
		cpus = cpus[:1]
	}
	var cs []io.Closer
	for _, cpu := range cpus {
		c, err := attachCPUClock(cpu, r.PeriodNS, prog)
		if err != nil {
			provider.Closers(cs...).Close()
			return nil, fmt.Errorf("attach %s on CPU %d: %w", p, cpu, err)
		}
		cs = append(cs, c)
	}
	return provider.Closers(cs...), nil
}

// perfFD closes a perf event file descriptor.
type perfFD int

func (fd perfFD) Close() error { return unix.Close(int(fd)) }

func attachCPUClock(cpu int, periodNS uint64, prog *ebpf.Program) (io.Closer, error) {
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_CPU_CLOCK,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Sample: periodNS,
	}
	fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("perf_event_open: %w", err)
	}
	l, err := link.AttachRawLink(link.RawLinkOptions{Target: fd, Program: prog, Attach: ebpf.AttachPerfEvent})
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("link perf event: %w", err)
	}
	// Close the link before the event it is attached to.
	return provider.Closers(perfFD(fd), l), nil
}
