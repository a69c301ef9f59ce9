package ktrace

import (
	"fmt"
	"io"

	"github.com/cilium/ebpf"

	"github.com/dtrace-go/dtrace/provider"
)

// Attach links the program to each of the probe's tracepoints; closing
// the result detaches them all.
func (pv *Provider) Attach(p *provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	s, srcs, err := pv.spec(p)
	if err != nil {
		return nil, err
	}
	if len(srcs) == 0 {
		return nil, fmt.Errorf("attach %s: %w", p, ErrNoTracepoint)
	}
	var cs []io.Closer
	for _, src := range srcs {
		attach := provider.AttachRawTracepoint
		if s.Kind == Event {
			attach = provider.AttachTracepoint
		}
		c, err := attach(p, src.Group, src.Name, prog)
		if err != nil {
			provider.Closers(cs...).Close()
			return nil, err
		}
		cs = append(cs, c)
	}
	return provider.Closers(cs...), nil
}
