package sdt

import (
	"fmt"
	"io"

	"github.com/cilium/ebpf"

	"github.com/dtrace-go/dtrace/provider"
)

// Attach links the program to the probe's tracepoint through a perf
// event; closing the result detaches it.
func (pv *Provider) Attach(p *provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	ev, ok := p.Data.(event)
	if !ok {
		return nil, fmt.Errorf("sdt: probe %s was not made by this provider", p)
	}
	return provider.AttachTracepoint(p, ev.group, ev.name, prog)
}
