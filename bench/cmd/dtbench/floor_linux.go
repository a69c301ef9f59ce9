//go:build linux

package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
)

// runFloor is the floor tracer (dtbench -floor): the least a BPF tracer
// can do per getppid() call. A TRACEPOINT program on
// syscalls:sys_enter_getppid looks up slot 0 of a one-slot per-CPU array
// and adds 1 to it, with plain loads and stores (per-CPU, so no atomics).
// It prints "ready" once attached, and "count N" (the sum over the CPUs)
// when SIGINT or SIGTERM arrives.
func runFloor() error {
	_ = rlimit.RemoveMemlock()
	m, err := ebpf.NewMap(&ebpf.MapSpec{
		Name:       "dtbench_floor",
		Type:       ebpf.PerCPUArray,
		KeySize:    4,
		ValueSize:  8,
		MaxEntries: 1,
	})
	if err != nil {
		return fmt.Errorf("floor map: %w", err)
	}
	defer m.Close()
	insns := asm.Instructions{
		asm.StoreImm(asm.RFP, -4, 0, asm.Word),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "dtbench_floor",
		Type:         ebpf.TracePoint,
		Instructions: insns,
		License:      "GPL",
	})
	if err != nil {
		return fmt.Errorf("floor program: %w", err)
	}
	defer prog.Close()

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	l, err := link.Tracepoint("syscalls", "sys_enter_getppid", prog, nil)
	if err != nil {
		return fmt.Errorf("floor attach: %w", err)
	}
	fmt.Println("ready")
	<-sig
	l.Close()

	var vals []uint64
	if err := m.Lookup(uint32(0), &vals); err != nil {
		return fmt.Errorf("floor lookup: %w", err)
	}
	var sum uint64
	for _, v := range vals {
		sum += v
	}
	fmt.Printf("count %d\n", sum)
	return nil
}
