package lockstat

import (
	"fmt"
	"io"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/dtrace-go/dtrace/provider"
)

// attach makes one kprobe or kretprobe link per target, with its cookie.
func attach(p *provider.Probe, prog *ebpf.Program, targets []target) (io.Closer, error) {
	var cs []io.Closer
	for _, t := range targets {
		opts := &link.KprobeOptions{Cookie: t.pt.cookie()}
		var l link.Link
		var err error
		if t.ret {
			l, err = link.Kretprobe(t.fn, prog, opts)
		} else {
			l, err = link.Kprobe(t.fn, prog, opts)
		}
		if err != nil {
			provider.Closers(cs...).Close()
			return nil, fmt.Errorf("attach %s to %s: %w", p, t.fn, err)
		}
		cs = append(cs, l)
	}
	return provider.Closers(cs...), nil
}
