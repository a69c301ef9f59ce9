package ktrace

import (
	"fmt"
	"io"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/dtrace-go/dtrace/internal/kernel"
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
	if s.Kind == Event {
		// cilium/ebpf finds the event id in tracefs, which must be mounted.
		if _, err := kernel.MountTracefs(); err != nil {
			return nil, err
		}
	}
	var cs []io.Closer
	for _, src := range srcs {
		var l link.Link
		var err error
		if s.Kind == Event {
			l, err = link.Tracepoint(src.Group, src.Name, prog, nil)
		} else {
			l, err = link.AttachRawTracepoint(link.RawTracepointOptions{Name: src.Name, Program: prog})
		}
		if err != nil {
			provider.Closers(cs...).Close()
			return nil, fmt.Errorf("attach %s to %s:%s: %w", p, src.Group, src.Name, err)
		}
		cs = append(cs, l)
	}
	return provider.Closers(cs...), nil
}
