package profile

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/provider"
)

// Kind tells profile probes (every CPU) from tick probes (one CPU).
type Kind int

// The kinds, with their name prefixes "profile-" and "tick-".
const (
	Profile Kind = iota
	Tick
)

// MinInterval is the shortest period a probe may have, as in illumos
// (200 microseconds); shorter names do not make a probe.
const MinInterval = 200_000

// Rate is what a probe name says: kind and period in nanoseconds.
type Rate struct {
	Kind     Kind
	PeriodNS uint64
}

var suffixes = map[string]uint64{
	"ns": 1, "nsec": 1,
	"us": 1e3, "usec": 1e3,
	"ms": 1e6, "msec": 1e6,
	"s": 1e9, "sec": 1e9,
	"m": 60e9, "min": 60e9,
	"h": 3600e9, "hour": 3600e9,
	"d": 86400e9, "day": 86400e9,
	"hz": 0,
}

// ParseName parses a probe name such as "profile-97", "tick-1sec" or
// "tick-10ms". It reports false for names that do not make a probe.
func ParseName(name string) (Rate, bool) {
	var r Rate
	var rest string
	switch {
	case strings.HasPrefix(name, "profile-"):
		r.Kind, rest = Profile, name[len("profile-"):]
	case strings.HasPrefix(name, "tick-"):
		r.Kind, rest = Tick, name[len("tick-"):]
	default:
		return r, false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 {
		return r, false
	}
	val, err := strconv.ParseUint(rest[:i], 10, 64)
	if err != nil || val == 0 {
		return r, false
	}
	mult := uint64(0) // hz
	if suf := rest[i:]; suf != "" {
		m, ok := suffixes[strings.ToLower(suf)]
		if !ok {
			return r, false
		}
		mult = m
	}
	if mult == 0 {
		r.PeriodNS = 1e9 / val
	} else {
		if val > ^uint64(0)/mult {
			return r, false
		}
		r.PeriodNS = val * mult
	}
	if r.PeriodNS < MinInterval {
		return r, false
	}
	return r, true
}

// The probes that always exist, in illumos order.
var (
	defaultProfile = []int{97, 199, 499, 997, 1999, 4001, 4999}
	defaultTick    = []int{1, 10, 100, 500, 1000, 5000}
)

// Provider is the profile provider.
type Provider struct {
	// cpu is the one CPU to fire on (dtrace's cpu option), or -1.
	cpu int
}

// New returns the profile provider.
func New() *Provider { return &Provider{cpu: -1} }

// ChooseCPU makes profile and tick probes fire on that CPU only
// (provider.CPUChooser); a negative cpu restores every CPU.
func (pv *Provider) ChooseCPU(cpu int) { pv.cpu = cpu }

// Name returns "profile".
func (*Provider) Name() string { return "profile" }

// MayName reports whether a probe of the provider may have a name
// pattern matches (provider.NameFilter): a glob, or profile-N and tick-N.
func (*Provider) MayName(pattern string) bool {
	return pattern == "" || provider.HasGlob(pattern) || strings.HasPrefix(pattern, "profile-") || strings.HasPrefix(pattern, "tick-")
}

// Probes returns the standing probes that match d and, when d names a
// probe exactly (no globs), that probe, made on demand.
func (*Provider) Probes(d provider.Desc) ([]*provider.Probe, error) {
	var out []*provider.Probe
	add := func(name string) {
		if r, ok := ParseName(name); ok && d.MatchesIn("", "", name) {
			out = append(out, &provider.Probe{Provider: "profile", Name: name, Data: r})
		}
	}
	for _, hz := range defaultProfile {
		add(fmt.Sprintf("profile-%d", hz))
	}
	for _, hz := range defaultTick {
		add(fmt.Sprintf("tick-%d", hz))
	}
	if d.Name != "" && !provider.HasGlob(d.Name) {
		add(d.Name)
	}
	return out, nil
}

// Program says: a perf-event program.
func (*Provider) Program(*provider.Probe) provider.ProgramKind {
	return provider.ProgramKind{Type: ebpf.PerfEvent}
}

// Prologue sets arg0 to the kernel pc and arg1 to the user pc from the
// interrupted registers in the bpf_perf_event_data context.
func (*Provider) Prologue(_ *provider.Probe, mstate int16) asm.Instructions {
	arg0 := mstate + abi.MStateArgs
	arg1 := arg0 + 8
	insns := userMode() // R0 = pc, R1 != 0 when the pc is a user address
	insns = append(insns,
		provider.StoreImmDW(asm.R7, arg0, 0),
		provider.StoreImmDW(asm.R7, arg1, 0),
		asm.JNE.Imm(asm.R1, 0, "dt_profile_user"),
		asm.StoreMem(asm.R7, arg0, asm.R0, asm.DWord),
		asm.Ja.Label("dt_profile_args"),
		asm.StoreMem(asm.R7, arg1, asm.R0, asm.DWord).WithSymbol("dt_profile_user"),
	)
	rest := provider.CopyArgs(0, 0, mstate)[2:]
	rest[0] = rest[0].WithSymbol("dt_profile_args")
	return append(insns, rest...)
}
