package syscall

import (
	"errors"
	"fmt"
	"io"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/provider"
)

// ShareKey puts a wide probe with the others of its side whose prologue
// copies as many arguments (every return probe copies the one return
// value): they share one program, which the dispatcher's program array
// holds at each of their system call numbers. Other probes get programs
// of their own.
func (pv *Provider) ShareKey(p *provider.Probe) string {
	fields, d := pv.fields(p)
	if d == nil || !d.wide {
		return ""
	}
	if !d.entry {
		return Return
	}
	return fmt.Sprintf("%s/%d", Entry, min(len(fields), 6))
}

// AttachShared stores one program of wide probes of one side at each of
// their system call numbers in that side's dispatcher; closing the
// result removes it from all of them.
func (pv *Provider) AttachShared(ps []*provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	if len(ps) == 0 {
		return nil, errors.New("syscall: no probes to attach")
	}
	var entry bool
	nrs := make([]int32, len(ps))
	for i, p := range ps {
		d, err := pv.data(p, true)
		if err != nil {
			return nil, err
		}
		if !d.wide || i > 0 && d.entry != entry {
			return nil, fmt.Errorf("attach %s: not a wide probe of the side of %s", p, ps[0])
		}
		entry, nrs[i] = d.entry, d.nr
	}
	c, err := pv.dispatch.add(entry, nrs, prog)
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", ps[0], err)
	}
	return c, nil
}

// Identify leaves the system call number in R0: the raw sys_enter
// tracepoint's second argument, the saved registers' orig_ax on sys_exit
// (whose second argument is the return value).
func (pv *Provider) Identify(p *provider.Probe, _ int16) asm.Instructions {
	d, err := pv.data(p, true)
	if err != nil {
		return asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.JEq.Imm(asm.R0, 0, provider.SkipLabel)}
	}
	if d.entry {
		return asm.Instructions{asm.LoadMem(asm.R0, asm.R6, 8, asm.DWord)}
	}
	return append(readRegs(asm.RFP, -8, 8, regsOrigAX, provider.SkipLabel),
		asm.LoadMem(asm.R0, asm.RFP, -8, asm.DWord))
}

// Identity is the probe's system call number.
func (pv *Provider) Identity(p *provider.Probe) uint32 {
	d, err := pv.data(p, false)
	if err != nil {
		return ^uint32(0)
	}
	return uint32(d.nr)
}
