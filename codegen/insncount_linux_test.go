//go:build linux

package codegen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/internal/bpfdis"
)

// TestClauseInstructionCounts pins the instructions of three common
// clause shapes, each run on every event of its probes: a change that
// adds one fails here, and is then either a cost worth paying (update
// the count, say why in the commit) or an instruction for a feature the
// clause does not use. The clauses must also carry nothing for
// speculations, traceoff()'s recording gate, flow ids, alloca() or
// pointers into scratch, which none of them uses.
//
// The options are fixed (ISA v4, task_struct.comm at a made-up offset,
// as kernels with BTF give it), so the counts do not follow the kernel
// the test runs on.
func TestClauseInstructionCounts(t *testing.T) {
	opts := Options{ISA: 4, StrSize: 256,
		MemberOffset: func(string, string) (uint32, error) { return 1752, nil }}
	for _, tc := range []struct {
		name, src string
		want      int
	}{
		// The key's comm is read whole and its bytes after the NUL
		// cleared (a name being renamed may hold old bytes there);
		// count() probes the per-CPU cache, then the map.
		{"count by execname", `syscall::getppid:entry { @[execname] = count(); }`, 118},
		{"printf with two args", `syscall::read:entry { printf("%d %s\n", pid, execname); }`, 74},
		{"predicate and trace", `syscall::read:entry /pid == 1234/ { trace(arg0); }`, 28},
	} {
		spec := compileD(t, tc.src, opts)
		cl := spec.Clauses[0]
		if got := len(cl.Insns); got != tc.want {
			t.Errorf("%s: %d instructions, want %d:\n%s", tc.name, got, tc.want, dtListing(cl.Insns))
		}
		ms := int16(spec.Layout.MState)
		for i, ins := range cl.Insns {
			if ins.Dst == regScratch || ins.Src == regScratch {
				switch ins.Offset {
				case ms + abi.MStateSpecID, ms + msBase, ms + msAllocaLo, ms + msAllocaHi, ms + msTraceOff, ms + abi.MStateFlowKey:
					t.Errorf("%s: instruction %d (%v) uses mstate slot %d, for a feature the clause does not use", tc.name, i, ins, ins.Offset-ms)
				}
			}
			if ins.IsLoadFromMap() && (ins.Reference() == abi.MapState) {
				t.Errorf("%s: instruction %d (%v) reads %s: a recording gate without traceoff()", tc.name, i, ins, abi.MapState)
			}
			if ins.OpCode == asm.Ja.Op(asm.ImmSource) && ins.Offset == 0 && ins.Reference() == "" {
				t.Errorf("%s: instruction %d is a jump-by-zero", tc.name, i)
			}
		}
	}
	// The counter-check: a program that speculates clears the
	// speculation id in each clause, and its records carry it.
	spec := compileD(t, `syscall::read:entry { speculate(1); trace(arg0); } syscall::read:entry { trace(arg1); }`, opts)
	for _, cl := range spec.Clauses {
		found := false
		for _, ins := range cl.Insns {
			if ins.Src == regScratch && ins.Offset == int16(spec.Layout.MState)+abi.MStateSpecID {
				found = true
			}
		}
		if !found {
			t.Errorf("clause %d of a speculating program does not read the speculation id into its record", cl.Index)
		}
	}
}

// dtListing is insns as dtrace -S lists them (a 64-bit load takes two
// slots there, one instruction here).
func dtListing(insns asm.Instructions) string {
	l, err := bpfdis.FromInstructions(insns)
	if err != nil {
		return fmt.Sprintf("%v(%v)", insns, err)
	}
	var b strings.Builder
	l.Write(&b)
	return b.String()
}

// TestCompactFaultPCs checks that the fault PCs a clause stores (fault)
// still name the instruction that starts each fault path once compact
// has removed instructions before them: the store of the fault code.
func TestCompactFaultPCs(t *testing.T) {
	opts := Options{ISA: 4, StrSize: 256}
	spec := compileD(t, `BEGIN /arg0 == 1/ { x = arg1; trace(*(int *)x); trace(stringof(x)); }`, opts)
	ms := int16(spec.Layout.MState)
	cl := spec.Clauses[0]
	n := 0
	for _, ins := range cl.Insns {
		if ins.OpCode.Class() != asm.StClass || ins.Dst != regScratch || ins.Offset != ms+msFaultPC {
			continue
		}
		n++
		pc := int(ins.Constant)
		if pc < 0 || pc >= len(cl.Insns) {
			t.Fatalf("fault pc %d outside the clause's %d instructions", pc, len(cl.Insns))
		}
		at := cl.Insns[pc]
		if at.OpCode.Class() != asm.StClass || at.Dst != regScratch || at.Offset != ms+abi.MStateFault {
			t.Errorf("fault pc %d names %v, not the store of the fault code", pc, at)
		}
	}
	if n == 0 {
		t.Fatal("no fault path in a clause that dereferences a pointer")
	}
}
