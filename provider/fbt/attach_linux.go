package fbt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/kfeature"
	"github.com/dtrace-go/dtrace/provider"
)

// Attach links the probe's program to its function: a tracing link for
// fentry/fexit, a kprobe or kretprobe link otherwise (a wide probe alone
// goes the way of AttachShared).
func (pv *Provider) Attach(p *provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	f, in, ret, err := pv.data(p)
	if err != nil {
		return nil, err
	}
	fentry, wide := pv.mode(p, in)
	var l link.Link
	switch {
	case wide:
		return pv.AttachShared(context.Background(), []*provider.Probe{p}, prog)
	case fentry:
		at := ebpf.AttachTraceFEntry
		if ret {
			at = ebpf.AttachTraceFExit
		}
		l, err = link.AttachTracing(link.TracingOptions{Program: prog, AttachType: at})
	case pv.shared[p.Data.(probeData).fn] > 0:
		return pv.attachOne(p, ret, prog)
	case ret:
		l, err = link.Kretprobe(f.name, prog, nil)
	default:
		l, err = link.Kprobe(f.name, prog, nil)
	}
	if errors.Is(err, unix.EADDRNOTAVAIL) {
		return pv.attachOne(p, ret, prog)
	}
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", p, err)
	}
	return l, nil
}

// AttachShared attaches one program to wide probes of one side, each
// probe's id its cookie: one kprobe.multi link on all their functions
// where the kernel has it (one ftrace update), one kprobe (or kretprobe)
// per function otherwise, until ctx is done (on 6.1, without
// kprobe.multi, each kprobe costs more than the last: bench/README.md).
func (pv *Provider) AttachShared(ctx context.Context, ps []*provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	if len(ps) == 0 {
		return nil, errors.New("fbt: no probes to attach")
	}
	syms := make([]string, len(ps))
	cookies := make([]uint64, len(ps))
	ret := false
	for i, p := range ps {
		f, _, r, err := pv.data(p)
		if err != nil {
			return nil, err
		}
		syms[i], cookies[i], ret = f.name, uint64(p.ID), r
	}
	if pv.multiOK() {
		opts := link.KprobeMultiOptions{Symbols: syms, Cookies: cookies}
		if pv.needAddresses(ps) {
			if a, c, ok := pv.multiByAddress(ps, cookies); ok {
				opts = link.KprobeMultiOptions{Addresses: a, Cookies: c}
			}
		}
		var l link.Link
		var err error
		if ret {
			l, err = link.KretprobeMulti(prog, opts)
		} else {
			l, err = link.KprobeMulti(prog, opts)
		}
		if err != nil {
			return nil, fmt.Errorf("attach %s: kprobe.multi link on %d functions: %w", ps[0], len(ps), err)
		}
		return l, nil
	}
	provider.RaiseFileLimit(2 * len(ps))
	ls := make(provider.ParallelClosers, 0, len(ps))
	var byAddr []int // indexes into ps of functions probed at each address
	for i, p := range ps {
		if err := ctx.Err(); err != nil {
			ls.Close()
			return nil, err
		}
		if pv.shared[p.Data.(probeData).fn] > 0 {
			byAddr = append(byAddr, i)
			continue
		}
		var l link.Link
		var err error
		o := &link.KprobeOptions{Cookie: cookies[i]}
		if ret {
			l, err = link.Kretprobe(syms[i], prog, o)
		} else {
			l, err = link.Kprobe(syms[i], prog, o)
		}
		switch {
		case err == nil:
			ls = append(ls, l)
		case errors.Is(err, unix.EADDRNOTAVAIL):
			// The name is a module's and vmlinux's, or several
			// static functions': each at its address.
			byAddr = append(byAddr, i)
		case refused(err, len(ps) > 1):
		default:
			ls.Close()
			return nil, fmt.Errorf("attach %s: %w", p, err)
		}
	}
	if len(byAddr) > 0 {
		cs, err := pv.attachAtAddresses(ctx, ps, byAddr, ret, prog)
		if err != nil {
			ls.Close()
			return nil, err
		}
		ls = append(ls, cs...)
	}
	if len(ls) == 0 {
		return nil, fmt.Errorf("attach %s: no function of the description takes a kprobe", ps[0])
	}
	return ls, nil
}

// multiOK reports whether wide probes may share a kprobe.multi link.
func (pv *Provider) multiOK() bool {
	return !pv.kprobeOnly && !pv.noMulti && kfeature.KprobeMulti() == nil
}

// attachOne attaches a kprobe at each address of p's function.
func (pv *Provider) attachOne(p *provider.Probe, ret bool, prog *ebpf.Program) (io.Closer, error) {
	cs, err := pv.attachAtAddresses(context.Background(), []*provider.Probe{p}, []int{0}, ret, prog)
	if err != nil {
		return nil, err
	}
	return provider.Closers(cs...), nil
}

// refused reports whether a wide attachment (several functions, or
// several copies of one) leaves out one that kprobes refuse (the kprobe
// blacklist: perf_event_nmi_handler, say), as kprobe.multi's ftrace would
// not take it either.
func refused(err error, wide bool) bool {
	return wide && (errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.EINVAL))
}

// attachAtAddresses attaches a kprobe at every address of the functions
// of ps[byAddr] (each copy of a shared name, found in kallsyms), each
// with its probe's id as cookie. It stops, detaching what it attached,
// when ctx is done.
func (pv *Provider) attachAtAddresses(ctx context.Context, ps []*provider.Probe, byAddr []int, ret bool, prog *ebpf.Program) ([]io.Closer, error) {
	want := make(map[function]bool, len(byAddr))
	for _, i := range byAddr {
		want[pv.funcs[ps[i].Data.(probeData).fn]] = true
	}
	addrs, err := symbolAddrs(want)
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", ps[byAddr[0]], err)
	}
	var cs []io.Closer
	for _, i := range byAddr {
		p := ps[i]
		as := addrs[pv.funcs[p.Data.(probeData).fn]]
		n := 0
		for _, a := range as {
			if err := ctx.Err(); err != nil {
				provider.Closers(cs...).Close()
				return nil, err
			}
			c, err := kprobeAt(a, ret, prog, uint64(p.ID))
			if err != nil {
				if refused(err, len(ps) > 1 || len(as) > 1) {
					continue
				}
				provider.Closers(cs...).Close()
				return nil, fmt.Errorf("attach %s: %w", p, err)
			}
			cs = append(cs, c)
			n++
		}
		if n == 0 && len(ps) == 1 {
			return nil, fmt.Errorf("attach %s: kallsyms lists no address of %s that takes a kprobe", p, p.Function)
		}
	}
	return cs, nil
}
