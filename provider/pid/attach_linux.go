//go:build linux

package pid

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/provider"
)

// Attach puts a uprobe (a uretprobe for return probes on function
// entries) on every site of the probe, filtered to its process. (The
// loader shares programs among pid probes, AttachShared, so this serves a
// probe alone.) A site the kernel cannot probe is left out of a probe a
// glob made.
func (*Provider) Attach(p *provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	d, ok := p.Data.(*Probe)
	if !ok {
		return nil, fmt.Errorf("pid: probe %s was not made by this provider", p)
	}
	return attach(context.Background(), d.Sites, func(int) bool { return d.Optional }, d.PID, d.Kind == Return && !d.AtReturns, groupOf(d), prog)
}

// ShareKey lets the probes of one process, kind and prologue share one
// program (provider.Sharer): pid$target:libc.so.6:*:entry is some 3,500
// probes, which would otherwise each load a program and a link (and
// freeing thousands of programs at once, when several such dtrace
// processes exit, has stalled the kernel's BPF). The program finds the
// probe id in the attach cookie, AttachShared puts it there.
func (*Provider) ShareKey(p *provider.Probe) string {
	d, ok := p.Data.(*Probe)
	if !ok {
		return ""
	}
	return shareKey(d)
}

// shareKey is ShareKey of a probe's data.
func shareKey(d *Probe) string {
	return fmt.Sprintf("%d/%d/%v/%v/%d", d.PID, d.Kind, d.AtReturns, d.Unlinked, d.CallerSlot)
}

// AttachShared attaches the one program of probes of one share key (one
// process, kind and prologue) to all their sites, each site's cookie
// carrying its probe's id (abi.CookieProbeIDMask): one uprobe_multi link
// per file where the kernel has them, one perf event per site otherwise.
func (*Provider) AttachShared(ctx context.Context, ps []*provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	var sites []Site
	var optional []bool
	pid, ret, group := 0, false, uint32(0)
	for _, p := range ps {
		d, ok := p.Data.(*Probe)
		if !ok {
			return nil, fmt.Errorf("pid: probe %s was not made by this provider", p)
		}
		pid, ret, group = d.PID, d.Kind == Return && !d.AtReturns, groupOf(d)
		for _, s := range d.Sites {
			s.Cookie = s.Cookie&^abi.CookieProbeIDMask | uint64(p.ID)
			sites = append(sites, s)
			optional = append(optional, d.Optional)
		}
	}
	return attach(ctx, sites, func(i int) bool { return optional[i] }, pid, ret, group, prog)
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
	return attach(context.Background(), sites, func(int) bool { return false }, pid, ret, 0, prog)
}

// attach is AttachSites, leaving out the sites the kernel cannot probe
// (Unsupported) for which optional(i) (sites[i]) is true; group is the
// sites' share group (groupOf).
func attach(ctx context.Context, sites []Site, optional func(int) bool, pid int, ret bool, group uint32, prog *ebpf.Program) (io.Closer, error) {
	if !Multi() {
		return attachPerf(ctx, sites, optional, pid, ret, group, prog)
	}
	var cs []io.Closer
	for _, idx := range byPath(sites) {
		path := sites[idx[0]].Path
		ex, err := link.OpenExecutable(path)
		if err != nil {
			provider.Closers(cs...).Close()
			return nil, err
		}
		l, err := attachMulti(ex, sites, idx, optional, pid, ret, prog)
		if err != nil {
			provider.Closers(cs...).Close()
			return nil, fmt.Errorf("uprobes in %s: %w", path, err)
		}
		if l != nil {
			cs = append(cs, l)
		}
	}
	return provider.Closers(cs...), nil
}

// byPath returns the indices of the sites of each file, the files in the
// order of their first site.
func byPath(sites []Site) [][]int {
	var out [][]int
	at := map[string]int{}
	for i, s := range sites {
		k, ok := at[s.Path]
		if !ok {
			k = len(out)
			at[s.Path] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], i)
	}
	return out
}

// attachPerf is attach on a kernel without uprobe_multi links, where
// uprobes are perf events. For a program that reads cookies with
// siteCookie (viaSiteMap) and uprobeEventMin sites or more, the sites go
// in one tracefs uprobe event (provider.TraceEvent) and their cookies in the site
// map, except a second site at an address (an alias of a function),
// which keeps a perf event with its cookie; otherwise, or if the event
// fails (no tracefs), each site is a perf event with its cookie.
func attachPerf(ctx context.Context, sites []Site, optional func(int) bool, pid int, ret bool, group uint32, prog *ebpf.Program) (io.Closer, error) {
	if ret || pid <= 0 || len(sites) < uprobeEventMin {
		return perfSites(ctx, sites, optional, pid, ret, prog)
	}
	sm, err := provider.ProgramMap(prog, siteMapName)
	if err != nil {
		return nil, fmt.Errorf("uprobes: %w", err)
	}
	if sm == nil {
		return perfSites(ctx, sites, optional, pid, ret, prog)
	}
	addrs, inodes, err := siteAddrs(pid, sites)
	if err != nil {
		sm.Close()
		return nil, fmt.Errorf("uprobes: %w", err)
	}
	type at struct{ ino, off uint64 }
	seen := map[at]bool{}
	var shared []int
	var own []Site
	var ownOptional []bool
	for i, s := range sites {
		if k := (at{inodes[i], s.FileOffset}); !seen[k] {
			seen[k] = true
			shared = append(shared, i)
			continue
		}
		own = append(own, s)
		ownOptional = append(ownOptional, optional(i))
	}
	entries, err := putSites(sm, pid, group, sites, shared, addrs)
	if err != nil {
		sm.Close()
		return nil, fmt.Errorf("uprobes: %w", err)
	}
	ev, err := openUprobeEvents(ctx, sites, shared, optional, pid, prog)
	if err != nil {
		entries.Close()
		// Without tracefs (or where it fails otherwise) each site is
		// a perf event of its own; a required site the kernel refuses
		// or an interruption ends here.
		var refused refusedError
		if errors.As(err, &refused) || ctx.Err() != nil {
			return nil, err
		}
		return perfSites(ctx, sites, optional, pid, ret, prog)
	}
	c, err := perfSites(ctx, own, func(i int) bool { return ownOptional[i] }, pid, ret, prog)
	if err != nil {
		ev.Close()
		entries.Close()
		return nil, err
	}
	return provider.Closers(entries, ev, c), nil
}

// perfSites attaches prog to one perf event per site, each with its
// cookie.
func perfSites(ctx context.Context, sites []Site, optional func(int) bool, pid int, ret bool, prog *ebpf.Program) (io.Closer, error) {
	var perf provider.ParallelClosers
	provider.RaiseFileLimit(2 * len(sites))
	for _, group := range byPath(sites) {
		path := sites[group[0]].Path
		ex, err := link.OpenExecutable(path)
		if err != nil {
			perf.Close()
			return nil, err
		}
		for _, i := range group {
			if err := ctx.Err(); err != nil {
				perf.Close()
				return nil, err
			}
			s := sites[i]
			opts := &link.UprobeOptions{Address: s.FileOffset, PID: pid, RefCtrOffset: s.RefCtrOffset, Cookie: s.Cookie}
			attach := ex.Uprobe
			if ret {
				attach = ex.Uretprobe
			}
			l, err := attach("", prog, opts)
			if err != nil {
				if Unsupported(err) && optional(i) {
					continue
				}
				perf.Close()
				return nil, fmt.Errorf("uprobe at %s+0x%x: %w", s.Path, s.FileOffset, err)
			}
			perf = append(perf, l)
		}
	}
	return perf, nil
}

// attachMulti attaches prog by one uprobe_multi link to the sites of one
// file (their indices in sites). Where the kernel refuses one of them
// (Unsupported: a lock-prefixed first instruction, say), it finds which
// by halves and, if they are all optional, links the others; it returns
// nil if none is left.
func attachMulti(ex *link.Executable, sites []Site, group []int, optional func(int) bool, pid int, ret bool, prog *ebpf.Program) (io.Closer, error) {
	l, err := multiLink(ex, sites, group, pid, ret, prog)
	if err == nil {
		return l, nil
	}
	if !Unsupported(err) {
		return nil, err
	}
	refusal := err
	refused := group
	if len(group) > 1 {
		if refused, err = refusedSites(ex, sites, group, pid, ret, prog); err != nil {
			return nil, err
		}
	}
	out := map[int]bool{}
	for _, i := range refused {
		if !optional(i) {
			return nil, fmt.Errorf("uprobe at 0x%x: %w", sites[i].FileOffset, refusal)
		}
		out[i] = true
	}
	var keep []int
	for _, i := range group {
		if !out[i] {
			keep = append(keep, i)
		}
	}
	if len(keep) == 0 {
		return nil, nil
	}
	if l, err = multiLink(ex, sites, keep, pid, ret, prog); err != nil {
		return nil, err
	}
	return l, nil
}

// refusedSites returns the sites of group (with more than one) that the
// kernel refuses to probe, found by halves.
func refusedSites(ex *link.Executable, sites []Site, group []int, pid int, ret bool, prog *ebpf.Program) ([]int, error) {
	var out []int
	half := len(group) / 2
	for _, g := range [][]int{group[:half], group[half:]} {
		l, err := multiLink(ex, sites, g, pid, ret, prog)
		switch {
		case err == nil:
			l.Close()
		case !Unsupported(err):
			return nil, err
		case len(g) == 1:
			out = append(out, g[0])
		default:
			r, err := refusedSites(ex, sites, g, pid, ret, prog)
			if err != nil {
				return nil, err
			}
			out = append(out, r...)
		}
	}
	return out, nil
}

// multiLink attaches prog by one uprobe_multi link to the sites of group.
func multiLink(ex *link.Executable, sites []Site, group []int, pid int, ret bool, prog *ebpf.Program) (link.Link, error) {
	opts := &link.UprobeMultiOptions{PID: uint32(pid)}
	hasRef := false
	for _, i := range group {
		s := sites[i]
		opts.Addresses = append(opts.Addresses, s.FileOffset)
		opts.RefCtrOffsets = append(opts.RefCtrOffsets, s.RefCtrOffset)
		opts.Cookies = append(opts.Cookies, s.Cookie)
		hasRef = hasRef || s.RefCtrOffset != 0
	}
	if !hasRef {
		opts.RefCtrOffsets = nil
	}
	if ret {
		return ex.UretprobeMulti(nil, prog, opts)
	}
	return ex.UprobeMulti(nil, prog, opts)
}
