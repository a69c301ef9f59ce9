//go:build !linux

package provider

import (
	"io"

	"github.com/cilium/ebpf"
)

// AttachTracepoint fails: tracepoints are Linux only.
func AttachTracepoint(p *Probe, _, _ string, _ *ebpf.Program) (io.Closer, error) {
	return nil, NotSupported(p)
}

// AttachTracepointCookie fails: tracepoints are Linux only.
func AttachTracepointCookie(p *Probe, _, _ string, _ *ebpf.Program, _ uint64) (io.Closer, error) {
	return nil, NotSupported(p)
}

// AttachRawTracepoint fails: tracepoints are Linux only.
func AttachRawTracepoint(p *Probe, _, _ string, _ *ebpf.Program) (io.Closer, error) {
	return nil, NotSupported(p)
}

// AttachKprobe fails: kprobes are Linux only.
func AttachKprobe(p *Probe, _ string, _ *ebpf.Program, _ uint64) (io.Closer, error) {
	return nil, NotSupported(p)
}
