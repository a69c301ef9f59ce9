package loader

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/consumer"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// TestProfileIntoBuffers runs profile-997 into the consumer's buffers and
// checks that every record comes back attributed to the CPU it was made
// on, CPU by CPU.
func TestProfileIntoBuffers(t *testing.T) {
	cpuInArg1 := []asm.Instruction{
		asm.FnGetSmpProcessorId.Call(),
		asm.StoreMem(asm.R7, 8, asm.R0, asm.DWord),
	}
	spec := testSpec(
		&program.ClauseSpec{Probes: []string{"BEGIN"}, EPID: 1, Insns: emitClause("dt_clause_0")},
		&program.ClauseSpec{Probes: []string{"profile-997"}, EPID: 2, Insns: emitClause("dt_clause_1", cpuInArg1...)},
	)
	o, _ := loadPlan(t, spec, newRegistry())
	bufs, err := consumer.OpenBuffers(o.Map(abi.MapBuf), consumer.BufferOptions{Size: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer bufs.Close()
	if err := o.Attach(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(1, nil); err != nil {
		t.Fatal(err)
	}
	perCPU := map[int]int{}
	lastCPU := -1
	deadline := time.Now().Add(2 * time.Second)
	for len(perCPU) < len(bufs.CPUs()) && time.Now().Before(deadline) {
		lastCPU = -1
		err := bufs.Poll(20*time.Millisecond, func(cpu int, data []byte) error {
			if cpu < lastCPU {
				t.Errorf("CPU %d delivered after CPU %d in one drain", cpu, lastCPU)
			}
			lastCPU = cpu
			if binary.LittleEndian.Uint32(data) != 2 {
				return nil // the BEGIN record
			}
			if made := int(binary.LittleEndian.Uint64(data[24:])); made != cpu {
				t.Errorf("record made on CPU %d delivered as CPU %d", made, cpu)
			}
			perCPU[cpu]++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(perCPU) != len(bufs.CPUs()) {
		t.Fatalf("profile records per CPU %v, want every CPU of %v", perCPU, bufs.CPUs())
	}
	if d := bufs.Drops(); len(d) != 0 {
		t.Errorf("drops: %+v", d)
	}
}
