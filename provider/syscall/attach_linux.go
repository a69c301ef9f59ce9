package syscall

import (
	"fmt"
	"io"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/provider"
)

// Attach links the program to the probe's tracepoint through a perf
// event, or puts a wide probe's into the dispatcher of the raw sys_enter or
// sys_exit tracepoint; closing the result detaches it.
func (pv *Provider) Attach(p *provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	d, err := pv.data(p, true)
	if err != nil {
		return nil, err
	}
	if d.wide {
		c, err := pv.dispatch.add(d.entry, d.nr, prog)
		if err != nil {
			return nil, fmt.Errorf("attach %s: %w", p, err)
		}
		return c, nil
	}
	// cilium/ebpf finds the event id in tracefs, which must be mounted.
	if _, err := kernel.MountTracefs(); err != nil {
		return nil, err
	}
	l, err := link.Tracepoint(group, d.event, prog, nil)
	if err != nil {
		return nil, fmt.Errorf("attach %s to %s:%s: %w", p, group, d.event, err)
	}
	return l, nil
}
