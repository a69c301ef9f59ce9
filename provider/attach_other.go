//go:build !linux

package provider

import (
	"fmt"
	"io"

	"github.com/cilium/ebpf"
)

// AttachTracepoint fails: tracepoints are Linux only.
func AttachTracepoint(p *Probe, _, _ string, _ *ebpf.Program) (io.Closer, error) {
	return nil, fmt.Errorf("attach %s: %w", p, ebpf.ErrNotSupported)
}

// AttachRawTracepoint fails: tracepoints are Linux only.
func AttachRawTracepoint(p *Probe, _, _ string, _ *ebpf.Program) (io.Closer, error) {
	return nil, fmt.Errorf("attach %s: %w", p, ebpf.ErrNotSupported)
}
