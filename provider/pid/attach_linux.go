//go:build linux

package pid

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/provider"
)

// Attach puts a uprobe (a uretprobe for return probes on function
// entries) on every site of the probe, filtered to its process.
func (*Provider) Attach(p *provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	d, ok := p.Data.(*Probe)
	if !ok {
		return nil, fmt.Errorf("pid: probe %s was not made by this provider", p)
	}
	c, err := AttachSites(d.Sites, d.PID, d.Kind == Return && !d.AtReturns, prog)
	if err != nil && d.Optional && Unsupported(err) {
		return provider.Closers(), nil
	}
	return c, err
}

// Unsupported reports whether err is the kernel's refusal to put a uprobe
// on an instruction it cannot single-step or emulate.
func Unsupported(err error) bool {
	// ENOTSUPP (524) is the kernel's own; EOPNOTSUPP is what reaches
	// user space on most paths.
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, syscall.Errno(524))
}

var (
	multiOnce sync.Once
	multiOK   bool
)

// Multi reports whether the kernel has uprobe_multi links (Linux 6.6).
// They matter for detaching, not attaching: a uprobe perf event waits for
// an RCU grace period under a global mutex when closed (100 ms and more on
// a busy machine, one after the other), while a uprobe_multi link detaches
// all its sites with one wait and without that mutex.
func Multi() bool {
	multiOnce.Do(func() { multiOK = features.HaveBPFLinkUprobeMulti() == nil })
	return multiOK
}

// ProgramKind is the program kind of uprobe programs: kprobe programs,
// for uprobe_multi links where the kernel has them.
func ProgramKind() provider.ProgramKind {
	if Multi() {
		return provider.ProgramKind{Type: ebpf.Kprobe, AttachType: ebpf.AttachTraceUprobeMulti}
	}
	return provider.ProgramKind{Type: ebpf.Kprobe}
}

// AttachSites attaches prog to uprobes (uretprobes with ret) on the sites,
// only in process pid unless pid is 0, with one uprobe_multi link per file
// where the kernel has them (see ProgramKind) and one perf event per site
// otherwise. On error it detaches what it attached.
func AttachSites(sites []Site, pid int, ret bool, prog *ebpf.Program) (io.Closer, error) {
	var cs []io.Closer
	fail := func(err error) (io.Closer, error) {
		provider.Closers(cs...).Close()
		return nil, err
	}
	var paths []string
	byPath := map[string][]Site{}
	for _, s := range sites {
		if _, ok := byPath[s.Path]; !ok {
			paths = append(paths, s.Path)
		}
		byPath[s.Path] = append(byPath[s.Path], s)
	}
	for _, path := range paths {
		ex, err := link.OpenExecutable(path)
		if err != nil {
			return fail(err)
		}
		group := byPath[path]
		if Multi() {
			opts := &link.UprobeMultiOptions{PID: uint32(pid)}
			hasRef := false
			for _, s := range group {
				opts.Addresses = append(opts.Addresses, s.FileOffset)
				opts.RefCtrOffsets = append(opts.RefCtrOffsets, s.RefCtrOffset)
				opts.Cookies = append(opts.Cookies, s.Cookie)
				hasRef = hasRef || s.RefCtrOffset != 0
			}
			if !hasRef {
				opts.RefCtrOffsets = nil
			}
			attach := ex.UprobeMulti
			if ret {
				attach = ex.UretprobeMulti
			}
			l, err := attach(nil, prog, opts)
			if err != nil {
				return fail(fmt.Errorf("uprobes in %s: %w", path, err))
			}
			cs = append(cs, l)
			continue
		}
		for _, s := range group {
			opts := &link.UprobeOptions{Address: s.FileOffset, PID: pid, RefCtrOffset: s.RefCtrOffset, Cookie: s.Cookie}
			attach := ex.Uprobe
			if ret {
				attach = ex.Uretprobe
			}
			l, err := attach("", prog, opts)
			if err != nil {
				return fail(fmt.Errorf("uprobe at %s+0x%x: %w", s.Path, s.FileOffset, err))
			}
			cs = append(cs, l)
		}
	}
	return provider.Closers(cs...), nil
}
