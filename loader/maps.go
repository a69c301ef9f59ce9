package loader

import (
	"fmt"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/provider"
)

func (o *Objects) createMaps() error {
	possible, err := kernel.PossibleCPUs()
	if err != nil {
		return err
	}
	ncpu := uint32(len(possible))
	specs := append([]program.MapSpec(nil), o.spec.Maps...)
	hasScratch := false
	for _, m := range specs {
		hasScratch = hasScratch || m.Name == abi.MapScratch
	}
	if !hasScratch {
		specs = append(specs, program.MapSpec{Name: abi.MapScratch, Kind: program.MapArray, KeySize: 4, ValueSize: o.spec.Layout.Size})
	}
	for _, ms := range specs {
		if _, dup := o.maps[ms.Name]; dup {
			return fmt.Errorf("map %s declared twice", ms.Name)
		}
		s, err := MapSpec(ms, ncpu)
		if err != nil {
			return err
		}
		m, err := ebpf.NewMap(s)
		if err != nil {
			return fmt.Errorf("create map %s: %w", ms.Name, err)
		}
		o.maps[ms.Name] = m
		for i, name := range ms.Inner {
			in, ok := o.maps[name]
			if !ok {
				return fmt.Errorf("map %s: inner map %s not made before it", ms.Name, name)
			}
			if err := m.Put(uint32(i), in); err != nil {
				return fmt.Errorf("map %s: put %s: %w", ms.Name, name, err)
			}
		}
	}
	return o.providerMaps(o.plan.Probes)
}

// providerMaps makes the maps the prologues of pps use
// (provider.Mapper) that the objects do not have yet; they stay until the
// objects close.
func (o *Objects) providerMaps(pps []*ProbePlan) error {
	for _, pp := range pps {
		mp, ok := pp.Probe.Owner.(provider.Mapper)
		if !ok {
			continue
		}
		for _, ms := range mp.Maps(pp.Probe) {
			if _, dup := o.maps[ms.Name]; dup {
				continue
			}
			// Least recently used entries go when it is full: a
			// provider's state about threads that are gone. A table
			// that Grows allocates its entries as they come instead.
			s := &ebpf.MapSpec{Name: kernelName(ms.Name), Type: ebpf.LRUHash,
				KeySize: ms.KeySize, ValueSize: ms.ValueSize, MaxEntries: ms.MaxEntries}
			if ms.Grows {
				s.Type, s.Flags = ebpf.Hash, unix.BPF_F_NO_PREALLOC
			}
			m, err := ebpf.NewMap(s)
			if err != nil {
				return fmt.Errorf("failed to enable '%s': create map %s: %w", pp.Probe, ms.Name, err)
			}
			o.maps[ms.Name] = m
		}
	}
	return nil
}

// MapSpec returns the kernel map the loader makes for ms on a machine
// of ncpu possible CPUs (the size of arrays with one entry per CPU).
func MapSpec(ms program.MapSpec, ncpu uint32) (*ebpf.MapSpec, error) {
	s := &ebpf.MapSpec{Name: kernelName(ms.Name), KeySize: ms.KeySize, ValueSize: ms.ValueSize, MaxEntries: ms.MaxEntries}
	switch ms.Kind {
	case program.MapArray:
		s.Type = ebpf.Array
		if s.MaxEntries == 0 {
			s.MaxEntries = ncpu
		}
	case program.MapPerCPUArray:
		s.Type = ebpf.PerCPUArray
		if s.MaxEntries == 0 {
			s.MaxEntries = 1
		}
	case program.MapHash:
		s.Type = ebpf.Hash
	case program.MapPerCPUHash:
		s.Type = ebpf.PerCPUHash
	case program.MapLRUHash:
		// One LRU list for the map (not one per CPU, which would give
		// a thread making flows on one CPU 1/ncpu of the table).
		s.Type = ebpf.LRUHash
	case program.MapPerfEventArray:
		s.Type = ebpf.PerfEventArray
		s.KeySize, s.ValueSize = 4, 4
		if s.MaxEntries == 0 {
			s.MaxEntries = ncpu
		}
	case program.MapArrayOfMaps:
		s.Type = ebpf.ArrayOfMaps
		if len(ms.Inner) > 0 {
			// Hashes: the kernel compares no inner hash's size.
			in, err := MapSpec(program.MapSpec{Name: ms.Name, Kind: ms.InnerKind, KeySize: ms.InnerKeySize, ValueSize: ms.InnerValueSize, MaxEntries: 1}, ncpu)
			if err != nil {
				return nil, err
			}
			s.InnerMap = in
			break
		}
		// BPF_F_INNER_MAP: each inner array has its own size.
		s.InnerMap = &ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: ms.InnerValueSize, MaxEntries: 1, Flags: unix.BPF_F_INNER_MAP}
	case program.MapRingBuf:
		s.Type = ebpf.RingBuf
		s.KeySize, s.ValueSize = 0, 0
	default:
		return nil, fmt.Errorf("map %s: unknown kind %d", ms.Name, ms.Kind)
	}
	if s.MaxEntries == 0 {
		return nil, fmt.Errorf("map %s: no size", ms.Name)
	}
	return s, nil
}

// kernelName shortens a name to what the kernel accepts for objects (15
// characters of [A-Za-z0-9_.]); names are for bpftool only.
func kernelName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = '_'
		}
	}
	if len(b) > 15 {
		b = b[:15]
	}
	return string(b)
}
