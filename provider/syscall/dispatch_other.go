//go:build !linux

package syscall

import (
	"io"

	"github.com/cilium/ebpf"
)

// dispatcher has nothing to dispatch where nothing attaches.
type dispatcher struct{}

// add fails: the raw syscall tracepoints are Linux only.
func (*dispatcher) add(bool, []int32, taskStatus, *ebpf.Program) (io.Closer, error) {
	return nil, ebpf.ErrNotSupported
}
