package syscall

import (
	"context"
	"io"

	"github.com/cilium/ebpf"

	"github.com/dtrace-go/dtrace/provider"
)

// Attach links the program to the probe's tracepoint through a perf
// event, or puts a wide probe's into the dispatcher of the raw sys_enter or
// sys_exit tracepoint (as AttachShared does); closing the result detaches
// it.
func (pv *Provider) Attach(p *provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	d, err := pv.data(p, true)
	if err != nil {
		return nil, err
	}
	if d.wide {
		return pv.AttachShared(context.Background(), []*provider.Probe{p}, prog)
	}
	return provider.AttachTracepoint(p, group, d.event, prog)
}
