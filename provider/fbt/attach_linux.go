package fbt

import (
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
		return pv.AttachShared([]*provider.Probe{p}, prog)
	case fentry:
		at := ebpf.AttachTraceFEntry
		if ret {
			at = ebpf.AttachTraceFExit
		}
		l, err = link.AttachTracing(link.TracingOptions{Program: prog, AttachType: at})
	case ret:
		l, err = link.Kretprobe(f.name, prog, nil)
	default:
		l, err = link.Kprobe(f.name, prog, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", p, err)
	}
	return l, nil
}

// AttachShared attaches one program to wide probes of one side, each
// probe's id its cookie: one kprobe.multi link on all their functions
// where the kernel has it (one ftrace update), one kprobe (or kretprobe)
// per function otherwise.
func (pv *Provider) AttachShared(ps []*provider.Probe, prog *ebpf.Program) (io.Closer, error) {
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
	for i, p := range ps {
		var l link.Link
		var err error
		o := &link.KprobeOptions{Cookie: cookies[i]}
		if ret {
			l, err = link.Kretprobe(syms[i], prog, o)
		} else {
			l, err = link.Kprobe(syms[i], prog, o)
		}
		if err != nil {
			if len(ps) > 1 && (errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.EINVAL)) {
				// A function kprobes refuse (the kprobe blacklist:
				// perf_event_nmi_handler, say) is left out of a wide
				// description, as kprobe.multi's ftrace would not.
				continue
			}
			ls.Close()
			return nil, fmt.Errorf("attach %s: %w", p, err)
		}
		ls = append(ls, l)
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
