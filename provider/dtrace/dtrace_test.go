package dtrace

import (
	"errors"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/provider"
)

func TestProbeIDs(t *testing.T) {
	r := provider.NewRegistry(New())
	tests := []struct {
		desc string
		want []string
	}{
		{"ERROR", []string{"dtrace:::ERROR"}},
		{"dtrace:::", []string{"dtrace:::BEGIN", "dtrace:::END", "dtrace:::ERROR"}},
		{"*N*", []string{"dtrace:::BEGIN", "dtrace:::END"}},
		{"dtrace::BEGIN:", nil},
	}
	for _, tt := range tests {
		d, err := provider.ParseDesc(tt.desc)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := r.Match(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != len(tt.want) {
			t.Fatalf("%s matched %v, want %v", tt.desc, ps, tt.want)
		}
		for i, p := range ps {
			if p.String() != tt.want[i] {
				t.Errorf("%s: probe %d = %s, want %s", tt.desc, i, p, tt.want[i])
			}
		}
	}
	for id, name := range map[uint32]string{1: Begin, 2: End, 3: Error} {
		if p := r.Probe(id); p == nil || p.Name != name {
			t.Errorf("probe %d = %v, want %s", id, p, name)
		}
	}
}

func TestProgramAndPrologue(t *testing.T) {
	p := New()
	probe := &provider.Probe{Provider: "dtrace", Name: Begin}
	if k := p.Program(probe); k.Type != ebpf.RawTracepoint || !k.TestRun {
		t.Fatalf("Program = %+v", k)
	}
	if _, err := p.Attach(probe, nil); !errors.Is(err, ErrNotAttachable) {
		t.Fatalf("Attach = %v", err)
	}
	insns := p.Prologue(probe, 64)
	// Ten loads from ctx and ten stores to mstate.arg[i].
	stores := map[int16]bool{}
	for _, ins := range insns {
		if ins.OpCode.Class() == asm.StXClass && ins.Dst == asm.R7 {
			stores[ins.Offset] = true
		}
	}
	for i := int16(0); i < abi.MStateNArgs; i++ {
		if !stores[64+8*i] {
			t.Errorf("prologue does not store arg%d at %d: %v", i, 64+8*i, insns)
		}
	}
}
