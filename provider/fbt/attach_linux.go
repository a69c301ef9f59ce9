package fbt

import (
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"

	"github.com/dtrace-go/dtrace/provider"
)

// Attach links the probe's program to its function: a tracing link for
// fentry/fexit, a slot in the kprobe.multi dispatcher for a wide probe, a
// kprobe or kretprobe link otherwise.
func (pv *Provider) Attach(p *provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	f, in, ret, err := pv.data(p)
	if err != nil {
		return nil, err
	}
	fentry, multi := pv.mode(p, in)
	var l link.Link
	switch {
	case multi:
		c, err := pv.multi.add(pv, p.Data.(probeData), prog)
		if err != nil {
			return nil, fmt.Errorf("attach %s: %w", p, err)
		}
		return c, nil
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

// multiState runs the wide probes: per side (entry, return) one
// kprobe.multi link on every wide function of that side, whose program
// tail-calls the probe program in the slot its cookie names.
type multiState struct {
	mu    sync.Mutex
	sides [2]*multiSide
}

type multiSide struct {
	slots map[probeData]uint32
	progs *ebpf.Map
	prog  *ebpf.Program
	link  link.Link
	users int
}

func sideOf(ret bool) int {
	if ret {
		return 1
	}
	return 0
}

// add puts prog in its probe's slot, creating the side (with a link on
// every wide function known now: all of the program's descriptions have
// been matched by then) on first use.
func (m *multiState) add(pv *Provider, d probeData, prog *ebpf.Program) (io.Closer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := sideOf(d.ret)
	s := m.sides[i]
	if s == nil {
		var err error
		if s, err = newMultiSide(pv, d.ret); err != nil {
			return nil, err
		}
		m.sides[i] = s
	}
	slot, ok := s.slots[d]
	if !ok {
		m.release(i)
		return nil, fmt.Errorf("kprobe.multi: no slot for %s", pv.funcs[d.fn].name)
	}
	if err := s.progs.Put(slot, prog); err != nil {
		m.release(i)
		return nil, fmt.Errorf("kprobe.multi slot: %w", err)
	}
	s.users++
	return &multiEntry{m: m, side: i, slot: slot}, nil
}

func newMultiSide(pv *Provider, ret bool) (*multiSide, error) {
	pv.mu.Lock()
	var keys []probeData
	for d := range pv.wide {
		if d.ret == ret {
			keys = append(keys, d)
		}
	}
	pv.mu.Unlock()
	sort.Slice(keys, func(a, b int) bool { return keys[a].fn < keys[b].fn })
	s := &multiSide{slots: map[probeData]uint32{}}
	syms := make([]string, len(keys))
	cookies := make([]uint64, len(keys))
	for i, d := range keys {
		s.slots[d] = uint32(i)
		syms[i] = pv.funcs[d.fn].name
		cookies[i] = uint64(i)
	}
	var err error
	s.progs, err = ebpf.NewMap(&ebpf.MapSpec{Name: "dt_fbt_multi", Type: ebpf.ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: uint32(max(len(keys), 1))})
	if err != nil {
		return nil, fmt.Errorf("kprobe.multi program array: %w", err)
	}
	progs := asm.LoadMapPtr(asm.R2, 0)
	if err := progs.AssociateMap(s.progs); err != nil {
		s.progs.Close()
		return nil, err
	}
	dispatch := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnGetAttachCookie.Call(),
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.Mov.Reg(asm.R1, asm.R6),
		progs,
		asm.FnTailCall.Call(),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	}
	s.prog, err = ebpf.NewProgram(&ebpf.ProgramSpec{Name: "dt_fbt_multi", Type: ebpf.Kprobe, AttachType: ebpf.AttachTraceKprobeMulti,
		Instructions: dispatch, License: "GPL"})
	if err != nil {
		s.progs.Close()
		return nil, fmt.Errorf("kprobe.multi dispatcher: %w", err)
	}
	opts := link.KprobeMultiOptions{Symbols: syms, Cookies: cookies}
	if ret {
		s.link, err = link.KretprobeMulti(s.prog, opts)
	} else {
		s.link, err = link.KprobeMulti(s.prog, opts)
	}
	if err != nil {
		s.prog.Close()
		s.progs.Close()
		return nil, fmt.Errorf("kprobe.multi link on %d functions: %w", len(syms), err)
	}
	return s, nil
}

// release closes a side nobody uses: the link first, so that the
// dispatcher never runs on a closed array.
func (m *multiState) release(i int) {
	s := m.sides[i]
	if s == nil || s.users > 0 {
		return
	}
	s.link.Close()
	s.prog.Close()
	s.progs.Close()
	m.sides[i] = nil
}

type multiEntry struct {
	m    *multiState
	side int
	slot uint32
	once sync.Once
}

func (e *multiEntry) Close() error {
	e.once.Do(func() {
		e.m.mu.Lock()
		defer e.m.mu.Unlock()
		s := e.m.sides[e.side]
		if s == nil {
			return
		}
		s.progs.Delete(e.slot)
		s.users--
		e.m.release(e.side)
	})
	return nil
}
