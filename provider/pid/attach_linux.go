//go:build linux

package pid

import (
	"fmt"
	"io"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/dtrace-go/dtrace/provider"
)

// Attach puts a uprobe (a uretprobe for return probes) on every site of
// the probe, filtered to its process.
func (*Provider) Attach(p *provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	d, ok := p.Data.(*Probe)
	if !ok {
		return nil, fmt.Errorf("pid: probe %s was not made by this provider", p)
	}
	return AttachSites(d.Sites, d.PID, d.Kind == Return, prog)
}

// AttachSites attaches prog to uprobes (uretprobes with ret) on the sites,
// only in process pid unless pid is 0. On error it detaches what it
// attached.
func AttachSites(sites []Site, pid int, ret bool, prog *ebpf.Program) (io.Closer, error) {
	var cs []io.Closer
	exes := map[string]*link.Executable{}
	for _, s := range sites {
		ex := exes[s.Path]
		if ex == nil {
			var err error
			if ex, err = link.OpenExecutable(s.Path); err != nil {
				provider.Closers(cs...).Close()
				return nil, err
			}
			exes[s.Path] = ex
		}
		opts := &link.UprobeOptions{Address: s.FileOffset, PID: pid, RefCtrOffset: s.RefCtrOffset, Cookie: s.Cookie}
		attach := ex.Uprobe
		if ret {
			attach = ex.Uretprobe
		}
		l, err := attach("", prog, opts)
		if err != nil {
			provider.Closers(cs...).Close()
			return nil, fmt.Errorf("uprobe at %s+0x%x: %w", s.Path, s.FileOffset, err)
		}
		cs = append(cs, l)
	}
	return provider.Closers(cs...), nil
}
