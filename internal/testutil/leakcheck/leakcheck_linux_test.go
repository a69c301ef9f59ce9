package leakcheck

import (
	"testing"

	"github.com/cilium/ebpf"
)

// TestKernelFDsCounts makes sure the leak check sees BPF descriptors.
func TestKernelFDsCounts(t *testing.T) {
	n := KernelFDs()
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got := KernelFDs(); got != n+1 {
		t.Fatalf("KernelFDs went from %d to %d after creating a map", n, got)
	}
}
