//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
)

// floorKinds are the floor tracers (dtbench -floor KIND): the least a BPF
// tracer can do per getppid() call on each way into the kernel, each
// adding 1 to slot 0 of a one-slot per-CPU array with plain loads and
// stores (per-CPU, so no atomics).
var floorKinds = map[string]string{
	// A TRACEPOINT program on the perf tracepoint of getppid alone: the
	// kernel builds the tracepoint's record (the arguments) and runs
	// the program for getppid() only.
	"tp": "TRACEPOINT program on syscalls:sys_enter_getppid",
	// A RAW_TRACEPOINT program on sys_enter, which runs for every system
	// call and returns at once unless the number is getppid's.
	"raw": "RAW_TRACEPOINT program on sys_enter, id == getppid",
	// The same as a tp_btf (BPF_PROG_TYPE_TRACING) program.
	"btf": "tp_btf program on sys_enter, id == getppid",
	// A RAW_TRACEPOINT program on sys_enter that tail-calls the counter
	// through a program array indexed by the system call number (the
	// counter is at getppid's): what a dispatcher of many probes costs.
	"tail": "RAW_TRACEPOINT dispatcher on sys_enter, tail call by id",
	// The same dispatcher and counter as tp_btf programs: what a
	// dispatcher of many probes costs on that way in.
	"btftail": "tp_btf dispatcher on sys_enter, tail call by id",
}

// runFloor runs the floor tracer of kind: it prints "ready" once
// attached, and "count N" (the sum over the CPUs) when SIGINT or SIGTERM
// arrives.
func runFloor(kind string) error {
	if _, ok := floorKinds[kind]; !ok {
		return fmt.Errorf("unknown floor %q", kind)
	}
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
	var insns asm.Instructions
	if kind == "raw" || kind == "btf" {
		// The context is sys_enter's arguments as u64s: regs, then id.
		insns = append(insns,
			asm.LoadMem(asm.R2, asm.R1, 8, asm.DWord),
			asm.JNE.Imm(asm.R2, getppidNR, "out"))
	}
	insns = append(insns,
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
	)
	spec := &ebpf.ProgramSpec{Name: "dtbench_floor", Instructions: insns, License: "GPL"}
	switch kind {
	case "tp":
		spec.Type = ebpf.TracePoint
	case "raw", "tail":
		spec.Type = ebpf.RawTracepoint
	case "btf", "btftail":
		spec.Type, spec.AttachType, spec.AttachTo = ebpf.Tracing, ebpf.AttachTraceRawTp, "sys_enter"
	}
	prog, err := ebpf.NewProgram(spec)
	if err != nil {
		return fmt.Errorf("floor program: %w", err)
	}
	defer prog.Close()
	if kind == "tail" || kind == "btftail" {
		var calls *ebpf.Map
		if prog, calls, err = dispatcher(prog, spec); err != nil {
			return err
		}
		defer prog.Close()
		// The kernel empties a program array when its last file
		// descriptor closes, whoever else holds the map: keep it open.
		defer calls.Close()
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	var l io.Closer
	switch kind {
	case "tp":
		l, err = link.Tracepoint("syscalls", "sys_enter_getppid", prog, nil)
	case "raw", "tail":
		l, err = link.AttachRawTracepoint(link.RawTracepointOptions{Name: "sys_enter", Program: prog})
	case "btf", "btftail":
		l, err = link.AttachTracing(link.TracingOptions{Program: prog, AttachType: ebpf.AttachTraceRawTp})
	}
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

// dispatcher returns a program of prog's type (from spec) that tail-calls
// prog when the system call is getppid, through a program array indexed
// by the number, and the array, which the caller must keep open while the
// dispatcher runs.
func dispatcher(prog *ebpf.Program, spec *ebpf.ProgramSpec) (*ebpf.Program, *ebpf.Map, error) {
	progs, err := ebpf.NewMap(&ebpf.MapSpec{Name: "dtbench_calls", Type: ebpf.ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: 1024})
	if err != nil {
		return nil, nil, fmt.Errorf("floor program array: %w", err)
	}
	if err := progs.Put(uint32(getppidNR), prog); err != nil {
		progs.Close()
		return nil, nil, fmt.Errorf("floor program array: %w", err)
	}
	d, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "dtbench_disp", Type: spec.Type, AttachType: spec.AttachType, AttachTo: spec.AttachTo, License: "GPL",
		Instructions: asm.Instructions{
			asm.LoadMem(asm.R3, asm.R1, 8, asm.DWord),
			asm.JGE.Imm(asm.R3, 1024, "out"),
			asm.LoadMapPtr(asm.R2, progs.FD()),
			asm.FnTailCall.Call(),
			asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
			asm.Return(),
		}})
	if err != nil {
		progs.Close()
		return nil, nil, fmt.Errorf("floor dispatcher: %w", err)
	}
	return d, progs, nil
}
