package profile

import (
	"fmt"
	"io"
	"slices"
	"unsafe"

	"github.com/cilium/ebpf"
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
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_CPU_CLOCK,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Sample: r.PeriodNS,
	}
	return provider.AttachPerfEvents(p, attr, cpus, prog)
}
