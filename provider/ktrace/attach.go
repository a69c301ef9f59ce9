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
		var c io.Closer
		var err error
		switch {
		case s.Kind == Event && src.Cookie != 0:
			c, err = provider.AttachTracepointCookie(p, src.Group, src.Name, prog, src.Cookie)
		case s.Kind == Event:
			c, err = provider.AttachTracepoint(p, src.Group, src.Name, prog)
		case s.Kind == Kprobe:
			c, err = provider.AttachKprobe(p, src.Name, prog, src.Cookie)
		default:
			c, err = provider.AttachRawTracepoint(p, src.Group, src.Name, prog)
		}
		if err != nil {
			provider.Closers(cs...).Close()
			return nil, err
		}
		cs = append(cs, c)
	}
	return provider.Closers(cs...), nil
}
