//go:build !linux

package fbt

import (
	"io"

	"github.com/cilium/ebpf"

	"github.com/dtrace-go/dtrace/provider"
)

// Attach fails: kprobes and fentry are Linux only.
func (*Provider) Attach(p *provider.Probe, _ *ebpf.Program) (io.Closer, error) {
	return nil, provider.NotSupported(p)
}

// multiState has nothing to dispatch where nothing attaches.
type multiState struct{}
