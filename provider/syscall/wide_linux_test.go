package syscall_test

import (
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/testutil/bpfobj"
	"github.com/dtrace-go/dtrace/internal/testutil/tracetest"
	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/provider"
	dtraceprov "github.com/dtrace-go/dtrace/provider/dtrace"
	"github.com/dtrace-go/dtrace/provider/syscall"
)

// TestWideGlob loads and attaches a clause on every system call probe:
// every tracepoint must accept its program, and the probes share programs,
// one per side and argument count (seven on entry, for 0 to 6 arguments,
// one on return), besides the two dispatchers.
func TestWideGlob(t *testing.T) {
	spec := &program.Spec{
		Maps: []program.MapSpec{
			{Name: "dt_buf", Kind: program.MapPerfEventArray},
			{Name: "dt_scratch", Kind: program.MapArray, KeySize: 4, ValueSize: 512},
			{Name: "dt_state", Kind: program.MapArray, KeySize: 4, ValueSize: 8, MaxEntries: 1},
		},
		Clauses: []*program.ClauseSpec{{Symbol: "dt_clause_0", Probes: []string{"syscall:::"}, EPID: 1, Insns: recordClause("dt_clause_0", 1), ReadsArgs: true}},
		Layout:  program.ScratchLayout{Size: 512, MState: 0, Output: outOff},
	}
	reg := provider.NewRegistry(dtraceprov.New(), syscall.New())
	before := bpfobj.NewSet()
	before.AddHeld(os.Getpid())
	start := time.Now()
	objs, plan := tracetest.Load(t, spec, reg)
	loaded := time.Since(start)
	if err := objs.Attach(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d probes: loaded in %v, attached in %v", len(plan.Probes), loaded, time.Since(start)-loaded)
	after := bpfobj.NewSet()
	after.AddHeld(os.Getpid())
	n := 0
	for id := range after.Progs {
		if !before.Progs[id] {
			n++
		}
	}
	t.Logf("%d programs", n)
	if len(plan.Probes) < 600 || n > 10 {
		t.Errorf("%d probes ran on %d programs, want at least 600 on at most 10", len(plan.Probes), n)
	}
}

// TestSysnums checks that the table of system call numbers knows nearly
// every system call the kernel has tracepoints for: the others fall back
// to their own tracepoints in wide probe sets.
func TestSysnums(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("system call numbers are known on amd64 only")
	}
	reg := provider.NewRegistry(syscall.New())
	all, err := reg.Match(provider.Desc{Provider: "syscall", Name: "entry"})
	if err != nil {
		t.Fatal(err)
	}
	var unknown []string
	for _, p := range all {
		if !syscall.KnownNumber(p.Function) {
			unknown = append(unknown, p.Function)
		}
	}
	if len(unknown) > 5 {
		t.Errorf("%d of %d system calls without a number: %v", len(unknown), len(all), unknown)
	}
}

// TestWideChoice checks which probes go wide: those of a description that
// matches more than WideThreshold probes, whichever clause named them
// first, and never those of the registry's own listing.
func TestWideChoice(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("system call numbers are known on amd64 only")
	}
	tests := []struct {
		descs    []string
		narrow   []string // probes that stay on their own tracepoint
		wideRead bool
	}{
		{[]string{"syscall::read:entry", "syscall::write:"}, nil, false},
		{[]string{"syscall::read:entry", "syscall:::entry"}, nil, true},
		{[]string{"syscall::read:entry", "syscall::*stat*:entry"}, []string{"read"}, false},
	}
	for _, tt := range tests {
		pv := syscall.New()
		reg := provider.NewRegistry(dtraceprov.New(), pv)
		if _, err := reg.List(); err != nil {
			t.Fatal(err)
		}
		var probes []*provider.Probe
		for _, s := range tt.descs {
			ps, err := reg.MatchString(s)
			if err != nil {
				t.Fatal(err)
			}
			probes = append(probes, ps...)
		}
		nwide := 0
		for _, p := range probes {
			wide := pv.Program(p).Type == ebpf.RawTracepoint
			if p.Function == "read" && wide != tt.wideRead {
				t.Errorf("%v: read wide = %v", tt.descs, wide)
			}
			if wide {
				nwide++
			}
		}
		if want := len(probes) - len(tt.narrow); tt.wideRead && nwide != want {
			t.Errorf("%v: %d of %d probes wide", tt.descs, nwide, len(probes))
		}
		if !tt.wideRead && len(tt.narrow) > 0 && nwide <= syscall.WideThreshold {
			t.Errorf("%v: only %d probes wide", tt.descs, nwide)
		}
	}
}

// TestPrologueNoArgs checks what a probe whose clauses read no argument
// is spared: a narrow entry probe's prologue is empty; a wide one keeps
// only the compat flag Identify needs, without reading the saved
// registers; a return probe still sets errno.
func TestPrologueNoArgs(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("system call numbers are known on amd64 only")
	}
	calls := func(insns asm.Instructions, fn asm.BuiltinFunc) int {
		n := 0
		for _, ins := range insns {
			if ins.IsBuiltinCall() && ins.Constant == int64(fn) {
				n++
			}
		}
		return n
	}
	for _, descs := range [][]string{{"syscall::read:entry", "syscall::read:return"}, {"syscall:::entry", "syscall:::return"}} {
		pv := syscall.New()
		reg := provider.NewRegistry(dtraceprov.New(), pv)
		if _, err := reg.List(); err != nil {
			t.Fatal(err)
		}
		var probes []*provider.Probe
		for _, s := range descs {
			ps, err := reg.MatchString(s)
			if err != nil {
				t.Fatal(err)
			}
			probes = append(probes, ps...)
		}
		for _, p := range probes {
			if p.Function != "read" {
				continue
			}
			wide := pv.Program(p).Type == ebpf.RawTracepoint
			full, bare := pv.Prologue(p, 0), pv.PrologueNoArgs(p, 0)
			if len(bare) >= len(full) {
				t.Errorf("%s (wide %v): %d instructions without arguments, %d with", p, wide, len(bare), len(full))
			}
			switch {
			case p.Name == "return":
				if !slices.ContainsFunc(bare, func(ins asm.Instruction) bool { return ins.Symbol() == "dt_syscall_errno_done" }) {
					t.Errorf("%s (wide %v): no errno without arguments:\n%v", p, wide, bare)
				}
			case wide:
				// The compat flag may read task_struct with a helper
				// where the kernel has no BTF: one call at most.
				if got, all := calls(bare, asm.FnProbeReadKernel), calls(full, asm.FnProbeReadKernel); got >= all {
					t.Errorf("%s: %d bpf_probe_read_kernel calls without arguments, %d with", p, got, all)
				}
			default:
				if len(bare) != 0 {
					t.Errorf("%s: prologue without arguments:\n%v", p, bare)
				}
			}
		}
	}
}
