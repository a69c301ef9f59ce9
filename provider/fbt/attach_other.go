//go:build !linux

package fbt

import (
	"context"
	"io"

	"github.com/cilium/ebpf"

	"github.com/dtrace-go/dtrace/provider"
)

// Attach fails: kprobes and fentry are Linux only.
func (*Provider) Attach(p *provider.Probe, _ *ebpf.Program) (io.Closer, error) {
	return nil, provider.NotSupported(p)
}

// AttachShared fails: kprobes and fentry are Linux only.
func (*Provider) AttachShared(_ context.Context, ps []*provider.Probe, _ *ebpf.Program) (io.Closer, error) {
	return nil, provider.NotSupported(&provider.Probe{Provider: Name})
}

// multiOK is false where nothing attaches.
func (*Provider) multiOK() bool { return false }
