//go:build linux

package codegen

import (
	"encoding/binary"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/btf"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/perf"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/loader"
	"github.com/dtrace-go/dtrace/program"
)

// This file runs generated clauses in the kernel: a tiny raw-tracepoint
// wrapper program plays the loader's part (scratch lookup, mstate from the
// context, a call per clause) and BPF_PROG_TEST_RUN fires it.

type runner struct {
	spec *program.Spec
	maps map[string]*ebpf.Map
	prog *ebpf.Program
	rd   *perf.Reader
}

func needBPF(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for BPF")
	}
}

// wrapper builds the probe program for clauses (all of them when nil).
func wrapper(spec *program.Spec, prid uint32) asm.Instructions {
	ms := int16(spec.Layout.MState)
	insns := loader.ScratchPrologue("test_probe", "test_have")
	// The clauses carry line info, so the kernel wants the first
	// function's too.
	insns[0] = insns[0].WithSource(asm.Comment("test probe"))
	for i := int16(0); i < 10; i++ {
		insns = append(insns, asm.LoadMem(asm.R0, asm.R6, 8*i, asm.DWord), asm.StoreMem(asm.R7, ms+abi.MStateArgs+8*i, asm.R0, asm.DWord))
	}
	insns = append(insns,
		storeImm(asm.R7, ms+abi.MStatePrid, int64(prid), asm.Word),
		storeImm(asm.R7, ms+abi.MStateFault, 0, asm.DWord),
		storeImm(asm.R7, ms+abi.MStateIllval, 0, asm.DWord),
		storeImm(asm.R7, ms+abi.MStateTimestamp, 0, asm.DWord),
		storeImm(asm.R7, ms+abi.MStateSpecID, 0, asm.DWord),
	)
	for _, c := range spec.Clauses {
		insns = append(insns,
			storeImm(asm.R7, ms+abi.MStateEPID, int64(c.EPID), asm.Word),
			asm.Mov.Reg(asm.R1, asm.R6), asm.Mov.Reg(asm.R2, asm.R7), asm.Call.Label(c.Symbol))
	}
	insns = append(insns, asm.Mov.Imm(asm.R0, 0), asm.Return())
	for _, c := range spec.Clauses {
		insns = append(insns, c.Insns...)
	}
	// Shared functions go in only when referenced: the kernel rejects
	// unreachable code.
	added := map[string]bool{}
	for changed := true; changed; {
		changed = false
		refs := map[string]bool{}
		for _, ins := range insns {
			if ins.IsFunctionReference() && ins.Reference() != "" {
				refs[ins.Reference()] = true
			}
		}
		for _, f := range spec.Funcs {
			if sym := f[0].Symbol(); refs[sym] && !added[sym] {
				added[sym] = true
				changed = true
				insns = append(insns, f...)
			}
		}
	}
	return insns
}

func loadSpec(t testing.TB, spec *program.Spec) *runner {
	t.Helper()
	needBPF(t)
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{spec: spec, maps: map[string]*ebpf.Map{}}
	t.Cleanup(r.close)
	// Thread-local variables are keyed by thread id: stay on one thread.
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	for _, ms := range spec.Maps {
		es, err := loader.MapSpec(ms, uint32(ncpu))
		if err != nil {
			t.Fatal(err)
		}
		m, err := ebpf.NewMap(es)
		if err != nil {
			t.Fatalf("map %s: %v", ms.Name, err)
		}
		r.maps[ms.Name] = m
		for i, name := range ms.Inner {
			if err := m.Put(uint32(i), r.maps[name]); err != nil {
				t.Fatalf("map %s: put %s: %v", ms.Name, name, err)
			}
		}
	}
	insns := wrapper(spec, 1)
	funcInfo(insns)
	for name, m := range r.maps {
		if err := insns.AssociateMap(name, m); err != nil && !errors.Is(err, asm.ErrUnreferencedSymbol) {
			t.Fatalf("associate %s: %v", name, err)
		}
	}
	prog, err := ebpf.NewProgramWithOptions(&ebpf.ProgramSpec{
		Type: ebpf.RawTracepoint, Instructions: insns, License: "GPL",
	}, ebpf.ProgramOptions{LogDisabled: os.Getenv("CODEGEN_NOLOG") != ""})
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			t.Fatalf("load: %+v\n%v", ve, insns)
		}
		t.Fatalf("load: %v", err)
	}
	r.prog = prog
	rd, err := perf.NewReader(r.maps[abi.MapBuf], 16*os.Getpagesize())
	if err != nil {
		t.Fatal(err)
	}
	r.rd = rd
	return r
}

func (r *runner) close() {
	if r.rd != nil {
		r.rd.Close()
	}
	if r.prog != nil {
		r.prog.Close()
	}
	for _, m := range r.maps {
		m.Close()
	}
}

// fire test-runs the program with the given arguments and returns the
// records it emitted.
func (r *runner) fire(t testing.TB, args ...uint64) [][]byte {
	t.Helper()
	ctx := make([]uint64, 10)
	copy(ctx, args)
	if _, err := r.prog.Run(&ebpf.RunOptions{Context: ctx}); err != nil {
		t.Fatalf("run: %v", err)
	}
	var recs [][]byte
	for {
		// BPF_PROG_TEST_RUN has written the records when Run returns.
		r.rd.SetDeadline(time.Now())
		rec, err := r.rd.Read()
		if err != nil {
			break
		}
		if rec.LostSamples != 0 {
			t.Fatalf("lost %d samples", rec.LostSamples)
		}
		recs = append(recs, rec.RawSample)
	}
	return recs
}

func u32(b []byte, off uint32) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
func u64(b []byte, off uint32) uint64 { return binary.LittleEndian.Uint64(b[off:]) }

// itemValue decodes an integer record item.
func itemValue(b []byte, it program.Record) int64 {
	var u uint64
	switch it.Size {
	case 1:
		u = uint64(b[it.Offset])
	case 2:
		u = uint64(binary.LittleEndian.Uint16(b[it.Offset:]))
	case 4:
		u = uint64(u32(b, it.Offset))
	default:
		u = u64(b, it.Offset)
	}
	if it.Kind == program.KindSigned {
		sh := 64 - 8*it.Size
		return int64(u<<sh) >> sh
	}
	return int64(u)
}

func itemString(b []byte, it program.Record) string {
	s := b[it.Offset : it.Offset+it.Size]
	for i, c := range s {
		if c == 0 {
			return string(s[:i])
		}
	}
	return string(s)
}

// funcInfo gives every function BTF func info when the program takes a
// function's address (bpf_loop callbacks need it), as the loader does.
func funcInfo(insns asm.Instructions) {
	entries := map[string]bool{insns[0].Symbol(): true}
	ptr := false
	for _, ins := range insns {
		if ins.IsFunctionCall() || ins.IsLoadOfFunctionPointer() {
			entries[ins.Reference()] = true
		}
		ptr = ptr || ins.IsLoadOfFunctionPointer()
	}
	if !ptr {
		return
	}
	proto := &btf.FuncProto{Return: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}}
	for i, ins := range insns {
		if sym := ins.Symbol(); sym != "" && entries[sym] {
			insns[i] = btf.WithFuncMetadata(ins, &btf.Func{Name: strings.NewReplacer(".", "_", "-", "_").Replace(sym), Type: proto, Linkage: btf.StaticFunc})
		}
	}
}
