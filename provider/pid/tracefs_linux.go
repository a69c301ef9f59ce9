//go:build linux

package pid

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/dtrace-go/dtrace/provider"
)

// uprobeEventMin is the number of sites from which an attachment on a
// kernel without uprobe_multi shares one tracefs uprobe event rather than
// opening one perf event per site: below it, detaching one site at a
// time takes well under a second.
const uprobeEventMin = 32

// errNoUprobeEvent says that the sites cannot share a tracefs event: no
// tracefs, or a path uprobe_events cannot spell.
var errNoUprobeEvent = errors.New("no tracefs uprobe event")

// openUprobeEvents puts the sites (sites[i] for i in idx) in tracefs
// uprobe events opened in process pid with prog attached: one event for
// them all or, where the kernel refuses a site (Unsupported: it cannot
// single-step or emulate the instruction), events of halves until each
// refused site is alone. Refused sites for which optional(i) is true are
// left out; another is a refusedError. Each failed try costs the kernel
// one grace period, so k refused sites of n cost some k*log2(n), unless
// they are Suspect: those are tried alone.
func openUprobeEvents(ctx context.Context, sites []Site, idx []int, optional func(int) bool, pid int, prog *ebpf.Program) (io.Closer, error) {
	var evs []io.Closer
	var try func(idx []int) error
	try = func(idx []int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ev, err := openUprobeEvent(sites, idx, pid, prog)
		switch {
		case err == nil:
			evs = append(evs, ev)
			return nil
		case !Unsupported(err):
			return err
		case len(idx) == 1 && optional(idx[0]):
			return nil
		case len(idx) == 1:
			return refusedError{fmt.Errorf("uprobe at %s+0x%x: %w", sites[idx[0]].Path, sites[idx[0]].FileOffset, err)}
		}
		h := len(idx) / 2
		if err := try(idx[:h]); err != nil {
			return err
		}
		return try(idx[h:])
	}
	// A site the kernel may refuse is tried alone: one refused site
	// among the others would cost log2(n) tries.
	var rest, suspect []int
	for _, i := range idx {
		if sites[i].Suspect {
			suspect = append(suspect, i)
		} else {
			rest = append(rest, i)
		}
	}
	groups := [][]int{rest}
	for _, i := range suspect {
		groups = append(groups, []int{i})
	}
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		if err := try(g); err != nil {
			provider.Closers(evs...).Close()
			return nil, err
		}
	}
	return provider.Closers(evs...), nil
}

// refusedError is the kernel's refusal of a site a probe cannot do
// without.
type refusedError struct{ error }

func (e refusedError) Unwrap() error { return e.error }

// openUprobeEvent puts the sites (sites[i] for i in idx) in one new
// tracefs uprobe event (provider.TraceEvent) and opens it in process pid
// with prog attached.
func openUprobeEvent(sites []Site, idx []int, pid int, prog *ebpf.Program) (io.Closer, error) {
	for _, i := range idx {
		if p := sites[i].Path; sites[i].RefCtrOffset != 0 || strings.ContainsAny(p, " \t\n\\") {
			return nil, errNoUprobeEvent
		}
	}
	e, err := provider.NewTraceEvent("uprobe_events")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNoUprobeEvent, err)
	}
	for _, i := range idx {
		if err := e.Add(fmt.Sprintf("%s:0x%x", sites[i].Path, sites[i].FileOffset)); err != nil {
			e.Close()
			return nil, fmt.Errorf("uprobe_events: %w", err)
		}
	}
	if err := e.Open(pid, -1, prog); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}
