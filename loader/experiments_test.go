package loader

// These experiments pin down what the run-time relies on from the kernel:
// test-run raw tracepoint programs with every helper the clauses use, and
// perf-event programs on cpu-clock events attached through BPF links.

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"
	"time"

	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/perf"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/abi"
)

const bpfFCurrentCPU = 0xffffffff

// scratchLookup emits R7 = &scratch[smp_processor_id()], exiting when the
// lookup fails. It clobbers R0-R5.
func scratchLookup(scratch *ebpf.Map) asm.Instructions {
	return asm.Instructions{
		asm.FnGetSmpProcessorId.Call(),
		asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word),
		asm.LoadMapPtr(asm.R1, scratch.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JNE.Imm(asm.R0, 0, "have_scratch"),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
		asm.Mov.Reg(asm.R7, asm.R0).WithSymbol("have_scratch"),
	}
}

func newMap(t *testing.T, spec *ebpf.MapSpec) *ebpf.Map {
	t.Helper()
	m, err := ebpf.NewMap(spec)
	if err != nil {
		t.Fatalf("create %s: %v", spec.Name, err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func perCPUBufs(t *testing.T) (*ebpf.Map, *perf.Reader) {
	t.Helper()
	buf := newMap(t, &ebpf.MapSpec{Name: abi.MapBuf, Type: ebpf.PerfEventArray})
	rd, err := perf.NewReader(buf, os.Getpagesize())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	return buf, rd
}

// TestExperimentRawTracepointTestRun checks that a never-attached raw
// tracepoint program can be run with BPF_PROG_TEST_RUN and use the helpers
// and program shapes generated code needs.
func TestExperimentRawTracepointTestRun(t *testing.T) {
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		t.Fatal(err)
	}
	scratch := newMap(t, &ebpf.MapSpec{Name: abi.MapScratch, Type: ebpf.Array, KeySize: 4, ValueSize: 128, MaxEntries: uint32(ncpu)})
	buf, rd := perCPUBufs(t)
	// A string in every CPU's scratch at offset 96 for probe_read_kernel_str.
	for c := 0; c < ncpu; c++ {
		v := make([]byte, 128)
		copy(v[96:], "hello")
		if err := scratch.Put(uint32(c), v); err != nil {
			t.Fatal(err)
		}
	}

	insns := asm.Instructions{asm.Mov.Reg(asm.R6, asm.R1)}
	insns = append(insns, scratchLookup(scratch)...)
	insns = append(insns,
		// [0] = ctx[0]
		asm.LoadMem(asm.R0, asm.R6, 0, asm.DWord),
		asm.StoreMem(asm.R7, 0, asm.R0, asm.DWord),
		// [8] = ktime
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.R7, 8, asm.R0, asm.DWord),
		// [16] = pid_tgid
		asm.FnGetCurrentPidTgid.Call(),
		asm.StoreMem(asm.R7, 16, asm.R0, asm.DWord),
		// [24] = cpu
		asm.FnGetSmpProcessorId.Call(),
		asm.StoreMem(asm.R7, 24, asm.R0, asm.DWord),
		// [32] = *(u64 *)(scratch + 0) via probe_read_kernel: scratch is kernel memory.
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.Add.Imm(asm.R1, 32),
		asm.Mov.Imm(asm.R2, 8),
		asm.Mov.Reg(asm.R3, asm.R7),
		asm.FnProbeReadKernel.Call(),
		// [40] = probe_read_kernel_str(&[64], 16, &[96]) result
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.Add.Imm(asm.R1, 64),
		asm.Mov.Imm(asm.R2, 16),
		asm.Mov.Reg(asm.R3, asm.R7),
		asm.Add.Imm(asm.R3, 96),
		asm.FnProbeReadKernelStr.Call(),
		asm.StoreMem(asm.R7, 40, asm.R0, asm.DWord),
		// [48] = sum of 0..9 with a bounded loop
		asm.Mov.Imm(asm.R8, 0),
		asm.Mov.Imm(asm.R9, 0),
		asm.Add.Reg(asm.R8, asm.R9).WithSymbol("loop"),
		asm.Add.Imm(asm.R9, 1),
		asm.JLT.Imm(asm.R9, 10, "loop"),
		asm.StoreMem(asm.R7, 48, asm.R8, asm.DWord),
		// BPF-to-BPF call with ctx and the map value pointer.
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Reg(asm.R2, asm.R7),
		asm.Call.Label("dt_clause_0"),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
		// dt_clause_0(ctx, scratch): emit 96 bytes of scratch.
		asm.Mov.Reg(asm.R4, asm.R2).WithSymbol("dt_clause_0"),
		asm.LoadMapPtr(asm.R2, buf.FD()),
		asm.LoadImm(asm.R3, bpfFCurrentCPU, asm.DWord),
		asm.Mov.Imm(asm.R5, 96),
		asm.FnPerfEventOutput.Call(),
		asm.Return(),
	)
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.RawTracepoint, Instructions: insns, License: "GPL"})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	defer prog.Close()

	before := time.Now()
	ret, err := prog.Run(&ebpf.RunOptions{Context: []uint64{42, 0, 0, 0, 0, 0, 0, 0, 0, 0}})
	if err != nil || ret != 0 {
		t.Fatalf("test run = %d, %v", ret, err)
	}
	rd.SetDeadline(time.Now().Add(time.Second))
	rec, err := rd.Read()
	if err != nil {
		t.Fatalf("perf read: %v", err)
	}
	s := rec.RawSample
	if len(s) < 96 {
		t.Fatalf("sample of %d bytes", len(s))
	}
	u := func(off int) uint64 { return binary.LittleEndian.Uint64(s[off:]) }
	if u(0) != 42 {
		t.Errorf("ctx[0] = %d, want 42", u(0))
	}
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	if now := uint64(ts.Nano()); u(8) == 0 || u(8) > now {
		t.Errorf("ktime %d not before now %d (started %v)", u(8), now, before)
	}
	if pid := u(16) >> 32; pid != uint64(os.Getpid()) {
		t.Errorf("tgid = %d, want %d", pid, os.Getpid())
	}
	if int(u(24)) != rec.CPU {
		t.Errorf("cpu %d, record on cpu %d", u(24), rec.CPU)
	}
	if u(32) != 42 {
		t.Errorf("probe_read_kernel got %d, want 42", u(32))
	}
	if u(40) != 6 || string(s[64:70]) != "hello\x00" {
		t.Errorf("probe_read_kernel_str = %d %q", u(40), s[64:70])
	}
	if u(48) != 45 {
		t.Errorf("loop sum = %d, want 45", u(48))
	}
}

// openCPUClock opens a cpu-clock software event with the given period.
func openCPUClock(cpu int, periodNS uint64) (int, error) {
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_CPU_CLOCK,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Sample: periodNS,
	}
	return unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
}

// TestExperimentPerfEventCPUClock checks that a perf-event program on a
// cpu-clock event, attached with BPF_LINK_CREATE, fires on every CPU and
// can output records, and that closing the link stops it.
func TestExperimentPerfEventCPUClock(t *testing.T) {
	buf, rd := perCPUBufs(t)
	insns := asm.Instructions{
		// Output regs->ip (x86-64: pt_regs offset 128).
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R0, asm.R6, 128, asm.DWord),
		asm.StoreMem(asm.RFP, -8, asm.R0, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.LoadMapPtr(asm.R2, buf.FD()),
		asm.LoadImm(asm.R3, bpfFCurrentCPU, asm.DWord),
		asm.Mov.Reg(asm.R4, asm.RFP),
		asm.Add.Imm(asm.R4, -8),
		asm.Mov.Imm(asm.R5, 8),
		asm.FnPerfEventOutput.Call(),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.PerfEvent, Instructions: insns, License: "GPL"})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	defer prog.Close()

	ncpu, _ := ebpf.PossibleCPU()
	var closers []func()
	for cpu := 0; cpu < ncpu; cpu++ {
		fd, err := openCPUClock(cpu, 1_000_000) // 1ms
		if err != nil {
			t.Fatalf("perf_event_open cpu %d: %v", cpu, err)
		}
		l, err := link.AttachRawLink(link.RawLinkOptions{Target: fd, Program: prog, Attach: ebpf.AttachPerfEvent})
		if err != nil {
			unix.Close(fd)
			t.Fatalf("BPF_LINK_CREATE on perf event: %v", err)
		}
		closers = append(closers, func() { l.Close(); unix.Close(fd) })
	}
	seen := map[int]int{}
	deadline := time.Now().Add(2 * time.Second)
	// Keep both CPUs busy enough that every CPU's clock fires.
	for len(seen) < ncpu && time.Now().Before(deadline) {
		rd.SetDeadline(time.Now().Add(50 * time.Millisecond))
		rec, err := rd.Read()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.RawSample) >= 8 && binary.LittleEndian.Uint64(rec.RawSample) != 0 {
			seen[rec.CPU]++
		}
	}
	if len(seen) < ncpu {
		t.Fatalf("records from CPUs %v, want all %d", seen, ncpu)
	}
	for _, c := range closers {
		c()
	}
	// Detached: after draining, nothing more arrives.
	time.Sleep(20 * time.Millisecond)
	for {
		rd.SetDeadline(time.Now())
		if _, err := rd.Read(); err != nil {
			break
		}
	}
	rd.SetDeadline(time.Now().Add(50 * time.Millisecond))
	if rec, err := rd.Read(); err == nil {
		t.Fatalf("record after detach: cpu %d", rec.CPU)
	}
}
