package usdt

import (
	"runtime"
	"testing"

	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/provider"
)

// TestPrologueNoArgs checks that a probe whose clauses read no argument
// neither finds its site nor reads its operands: memory operands cost a
// bpf_probe_read_user on every firing.
func TestPrologueNoArgs(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("operands are parsed for amd64")
	}
	args, err := ParseArgs("8@-16(%rbp) -4@%eax 8@8(%rsp)")
	if err != nil {
		t.Fatal(err)
	}
	reads := func(insns asm.Instructions) (n int) {
		for _, ins := range insns {
			if ins.IsBuiltinCall() && ins.Constant == int64(asm.FnProbeReadUser) {
				n++
			}
		}
		return n
	}
	for _, pid := range []int{0, 1234} {
		d := &Probe{PID: pid, Sites: []Site{{Args: args}, {Args: args}}}
		p := &provider.Probe{Provider: "test", Function: "f", Name: "n", Data: d}
		pv := &Provider{}
		full, bare := pv.Prologue(p, 0), pv.PrologueNoArgs(p, 0)
		if reads(full) < 4 {
			t.Errorf("pid %d: %d operand reads with arguments, want 4 (two memory operands at each of two sites)", pid, reads(full))
		}
		if reads(bare) != 0 {
			t.Errorf("pid %d: %d operand reads without arguments", pid, reads(bare))
		}
		if pid == 0 && len(bare) != 0 {
			t.Errorf("pid 0: prologue without arguments:\n%v", bare)
		}
		if pid != 0 && len(bare) == 0 {
			t.Errorf("pid %d: no process check without arguments", pid)
		}
	}
}
