//go:build !linux

package lockstat

import (
	"io"

	"github.com/cilium/ebpf"

	"github.com/dtrace-go/dtrace/provider"
)

// attach fails: kprobes are Linux only.
func attach(p *provider.Probe, _ *ebpf.Program, _ []target) (io.Closer, error) {
	return nil, provider.NotSupported(p)
}
