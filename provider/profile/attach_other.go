//go:build !linux

package profile

import (
	"io"

	"github.com/cilium/ebpf"

	"github.com/dtrace-go/dtrace/provider"
)

// Attach fails: perf events are Linux only.
func (*Provider) Attach(p *provider.Probe, _ *ebpf.Program) (io.Closer, error) {
	return nil, provider.NotSupported(p)
}
