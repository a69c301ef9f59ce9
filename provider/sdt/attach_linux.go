package sdt

import (
	"fmt"
	"io"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/provider"
)

// Attach links the program to the probe's tracepoint through a perf
// event; closing the result detaches it.
func (pv *Provider) Attach(p *provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	ev, ok := p.Data.(event)
	if !ok {
		return nil, fmt.Errorf("sdt: probe %s was not made by this provider", p)
	}
	// cilium/ebpf finds the event id in tracefs, which must be mounted.
	if _, err := kernel.MountTracefs(); err != nil {
		return nil, err
	}
	l, err := link.Tracepoint(ev.group, ev.name, prog, nil)
	if err != nil {
		return nil, fmt.Errorf("attach %s to %s:%s: %w", p, ev.group, ev.name, err)
	}
	return l, nil
}
