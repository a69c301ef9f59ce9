package fbt

import (
	"fmt"
	"io"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/dtrace-go/dtrace/provider"
)

// Attach links the probe's program to its function: a tracing link for
// fentry/fexit, a kprobe or kretprobe link otherwise.
func (pv *Provider) Attach(p *provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	f, in, ret, err := pv.data(p)
	if err != nil {
		return nil, err
	}
	var l link.Link
	switch {
	case in.fentry:
		at := ebpf.AttachTraceFEntry
		if ret {
			at = ebpf.AttachTraceFExit
		}
		l, err = link.AttachTracing(link.TracingOptions{Program: prog, AttachType: at})
	case ret:
		l, err = link.Kretprobe(f.name, prog, nil)
	default:
		l, err = link.Kprobe(f.name, prog, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", p, err)
	}
	return l, nil
}
