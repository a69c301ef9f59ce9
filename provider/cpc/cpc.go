// Package cpc is DTrace's CPU performance counter provider on Linux perf
// events: cpc:::EVENT-MODE-COUNT fires on each CPU every COUNT events of
// EVENT counted in MODE (all, user or kernel), with args[0] the kernel
// pc and args[1] the user pc of the thread the overflow interrupted (the
// other 0), as the profile provider passes them.
//
// EVENT is one of the kernel's generic perf events: the software ones
// (cpu_clock, task_clock, page_faults, context_switches, ...), which every
// kernel has, and the hardware ones (cycles, instructions, branches,
// cache_misses, ...) where the CPU has a performance monitoring unit. An
// event has two names: perf's, with '_' for '-' (cpu_clock), and
// libpfm's as dtrace-utils lists them (perf_count_sw_cpu_clock). dtrace
// -l lists EVENT-all-1000000000 for each event this machine can count;
// any other mode and count makes a probe when a description names it.
package cpc

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/profile"
)

// Name is the provider's name.
const Name = "cpc"

// MinCount is the smallest count a probe may have, as in illumos (its
// dcpc_min_overflow): an overflow every few events would flood the CPU.
const MinCount = 5000

// listCount is the count of the probes dtrace -l lists, as in
// dtrace-utils: large enough that no event fires them often.
const listCount = 1000000000

// event is a generic perf event.
type event struct {
	names  []string // perf's name first
	typ    uint32
	config uint64
}

var events = []event{
	{[]string{"cpu_clock", "perf_count_sw_cpu_clock"}, unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CPU_CLOCK},
	{[]string{"task_clock", "perf_count_sw_task_clock"}, unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_TASK_CLOCK},
	{[]string{"page_faults", "faults", "perf_count_sw_page_faults"}, unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_PAGE_FAULTS},
	{[]string{"context_switches", "cs", "perf_count_sw_context_switches"}, unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CONTEXT_SWITCHES},
	{[]string{"cpu_migrations", "migrations", "perf_count_sw_cpu_migrations"}, unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CPU_MIGRATIONS},
	{[]string{"minor_faults", "perf_count_sw_page_faults_min"}, unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_PAGE_FAULTS_MIN},
	{[]string{"major_faults", "perf_count_sw_page_faults_maj"}, unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_PAGE_FAULTS_MAJ},
	{[]string{"alignment_faults", "perf_count_sw_alignment_faults"}, unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_ALIGNMENT_FAULTS},
	{[]string{"emulation_faults", "perf_count_sw_emulation_faults"}, unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_EMULATION_FAULTS},
	{[]string{"cycles", "cpu_cycles", "perf_count_hw_cpu_cycles"}, unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CPU_CYCLES},
	{[]string{"instructions", "perf_count_hw_instructions"}, unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_INSTRUCTIONS},
	{[]string{"cache_references", "perf_count_hw_cache_references"}, unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CACHE_REFERENCES},
	{[]string{"cache_misses", "perf_count_hw_cache_misses"}, unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CACHE_MISSES},
	{[]string{"branches", "branch_instructions", "perf_count_hw_branch_instructions"}, unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
	{[]string{"branch_misses", "perf_count_hw_branch_misses"}, unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_BRANCH_MISSES},
	{[]string{"bus_cycles", "perf_count_hw_bus_cycles"}, unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_BUS_CYCLES},
	{[]string{"stalled_cycles_frontend", "perf_count_hw_stalled_cycles_frontend"}, unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
	{[]string{"stalled_cycles_backend", "perf_count_hw_stalled_cycles_backend"}, unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
	{[]string{"ref_cycles", "perf_count_hw_ref_cpu_cycles"}, unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_REF_CPU_CYCLES},
}

// Mode says which privilege levels an event is counted in.
type Mode int

// The modes, as probe names spell them.
const (
	All Mode = iota
	User
	Kernel
)

var modes = map[string]Mode{"all": All, "user": User, "kernel": Kernel}

// Counter is what a probe name says: the event, the mode and the count.
type Counter struct {
	Type   uint32
	Config uint64
	Mode   Mode
	Count  uint64
}

// lookup finds an event by one of its names.
func lookup(name string) (*event, bool) {
	for i := range events {
		for _, n := range events[i].names {
			if n == name {
				return &events[i], true
			}
		}
	}
	return nil, false
}

// ParseName parses EVENT-MODE-COUNT; it reports false for names that do
// not make a probe (an unknown event or mode, a count that is not a
// decimal number of at least MinCount).
func ParseName(name string) (Counter, bool) {
	parts := strings.Split(name, "-")
	if len(parts) != 3 {
		return Counter{}, false
	}
	ev, ok := lookup(parts[0])
	if !ok {
		return Counter{}, false
	}
	m, ok := modes[parts[1]]
	if !ok || parts[2] == "" || strings.Trim(parts[2], "0123456789") != "" {
		return Counter{}, false
	}
	n, err := strconv.ParseUint(parts[2], 10, 64)
	if err != nil || n < MinCount {
		return Counter{}, false
	}
	return Counter{Type: ev.typ, Config: ev.config, Mode: m, Count: n}, true
}

// Provider is the cpc provider.
type Provider struct {
	once   sync.Once
	usable []bool // per event: this machine can count it
}

// New returns the cpc provider.
func New() *Provider { return &Provider{} }

// Name returns "cpc".
func (*Provider) Name() string { return Name }

// MayName reports whether a probe name pattern may name cpc probes: a
// glob, or a name ParseName takes.
func (*Provider) MayName(pattern string) bool {
	if pattern == "" || provider.HasGlob(pattern) {
		return true
	}
	_, ok := ParseName(pattern)
	return ok
}

// load finds which events the machine can count, by opening each once.
func (pv *Provider) load() {
	pv.once.Do(func() {
		pv.usable = make([]bool, len(events))
		for i, ev := range events {
			pv.usable[i] = canCount(ev.typ, ev.config)
		}
	})
}

// Unavailable says why no event can be counted, or "".
func (pv *Provider) Unavailable() string {
	pv.load()
	for _, ok := range pv.usable {
		if ok {
			return ""
		}
	}
	return "this machine counts no perf events (perf_event_open refuses them)"
}

// Probes returns the listed probes (EVENT-all-1000000000 for each event
// the machine counts) that match d and, when d names a probe exactly,
// that probe, made on demand.
func (pv *Provider) Probes(d provider.Desc) ([]*provider.Probe, error) {
	pv.load()
	var out []*provider.Probe
	add := func(name string) {
		c, ok := ParseName(name)
		if !ok || !d.MatchesIn("", "", name) {
			return
		}
		out = append(out, &provider.Probe{Provider: Name, Name: name, Data: c})
	}
	for i, ev := range events {
		if !pv.usable[i] {
			continue
		}
		for _, n := range ev.names {
			add(fmt.Sprintf("%s-all-%d", n, listCount))
		}
	}
	if d.Name != "" && !provider.HasGlob(d.Name) {
		if c, ok := ParseName(d.Name); ok && pv.counts(c) {
			add(d.Name)
		}
	}
	return out, nil
}

// counts reports whether the machine can count the counter's event.
func (pv *Provider) counts(c Counter) bool {
	for i, ev := range events {
		if ev.typ == c.Type && ev.config == c.Config {
			return pv.usable[i]
		}
	}
	return false
}

// Program says: a perf-event program.
func (*Provider) Program(*provider.Probe) provider.ProgramKind {
	return provider.ProgramKind{Type: ebpf.PerfEvent}
}

// Prologue sets arg0 to the kernel pc and arg1 to the user pc, as
// profile's probes do.
func (*Provider) Prologue(p *provider.Probe, mstate int16) asm.Instructions {
	return profile.New().Prologue(p, mstate)
}

// Attach opens the probe's counter on every online CPU, the program
// linked to each.
func (pv *Provider) Attach(p *provider.Probe, prog *ebpf.Program) (io.Closer, error) {
	c, ok := p.Data.(Counter)
	if !ok {
		return nil, fmt.Errorf("cpc: probe %s was not made by this provider", p)
	}
	return attach(p, c, prog)
}
