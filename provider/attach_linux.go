package provider

import (
	"fmt"
	"io"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/dtrace-go/dtrace/internal/kernel"
)

// AttachTracepoint links prog to the tracefs event group:name through a
// perf event, for probe p; closing the result detaches it.
func AttachTracepoint(p *Probe, group, name string, prog *ebpf.Program) (io.Closer, error) {
	// cilium/ebpf finds the event id in tracefs, which must be mounted.
	if _, err := kernel.MountTracefs(); err != nil {
		return nil, err
	}
	l, err := link.Tracepoint(group, name, prog, nil)
	if err != nil {
		return nil, fmt.Errorf("attach %s to %s:%s: %w", p, group, name, err)
	}
	return l, nil
}

// AttachRawTracepoint links prog to the raw tracepoint name, for probe p
// (group names the tracepoint's group in errors); closing the result
// detaches it.
func AttachRawTracepoint(p *Probe, group, name string, prog *ebpf.Program) (io.Closer, error) {
	l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: name, Program: prog})
	if err != nil {
		return nil, fmt.Errorf("attach %s to %s:%s: %w", p, group, name, err)
	}
	return l, nil
}
