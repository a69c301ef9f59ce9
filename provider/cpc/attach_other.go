//go:build !linux

package cpc

import (
	"io"

	"github.com/cilium/ebpf"

	"github.com/dtrace-go/dtrace/provider"
)

func canCount(uint32, uint64) bool { return false }

func attach(p *provider.Probe, _ Counter, _ *ebpf.Program) (io.Closer, error) {
	return nil, provider.NotSupported(p)
}
