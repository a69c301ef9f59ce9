package syscall

import (
	"context"
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
func (pv *Provider) AttachShared(_ context.Context, ps []*provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	if len(ps) == 0 {
		return nil, errors.New("syscall: no probes to attach")
	}
	var entry bool
	var slots []int32
	for i, p := range ps {
		d, err := pv.data(p, true)
		if err != nil {
			return nil, err
		}
		if !d.wide || i > 0 && d.entry != entry {
			return nil, fmt.Errorf("attach %s: not a wide probe of the side of %s", p, ps[0])
		}
		entry = d.entry
		slots = append(slots, d.slots()...)
	}
	c, err := pv.dispatch.add(entry, slots, pv.statusOffset(), prog)
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", ps[0], err)
	}
	return c, nil
}

// slots are the indexes of a wide probe in its dispatcher's program
// array: its system call number, and compatBase plus each of its i386
// numbers.
func (d *probeData) slots() []int32 {
	s := []int32{d.nr}
	for _, nr := range d.nrs32 {
		s = append(s, compatBase+nr)
	}
	return s
}

// Identify leaves in R0 the probe's slot in the dispatcher: the system
// call number (the raw sys_enter tracepoint's second argument, the saved
// registers' orig_ax on sys_exit, whose second argument is the return
// value), plus compatBase when the task is in a compat system call, which
// the wide Prologue (run just before) found and left in R8.
func (pv *Provider) Identify(p *provider.Probe, _ int16) asm.Instructions {
	d, err := pv.data(p, true)
	if err != nil {
		return asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.JEq.Imm(asm.R0, 0, provider.SkipLabel)}
	}
	// The wide probe's Prologue, which the loader runs just before,
	// left the compat flag in R8.
	insns := asm.Instructions{asm.Mul.Imm(asm.R8, compatBase)}
	if d.entry {
		insns = append(insns, asm.LoadMem(asm.R0, asm.R6, 8, asm.DWord))
	} else {
		insns = append(insns, readRegs(asm.RFP, -8, 8, regsOrigAX, provider.SkipLabel)...)
		insns = append(insns, asm.LoadMem(asm.R0, asm.RFP, -8, asm.DWord))
	}
	return append(insns, asm.Add.Reg(asm.R0, asm.R8))
}

// Identities are the values Identify leaves when the probe fires: its
// slots.
func (pv *Provider) Identities(p *provider.Probe) []uint32 {
	d, err := pv.data(p, false)
	if err != nil {
		return nil
	}
	var ids []uint32
	for _, s := range d.slots() {
		ids = append(ids, uint32(s))
	}
	return ids
}
