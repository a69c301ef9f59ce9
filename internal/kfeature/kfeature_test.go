package kfeature

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

func TestV4Form(t *testing.T) {
	v4 := []asm.Instruction{
		asm.MovSX8.Reg(asm.R1, asm.R1),
		asm.MovSX16.Reg(asm.R1, asm.R1),
		asm.MovSX32.Reg(asm.R1, asm.R1),
		asm.LoadMemSX(asm.R1, asm.R2, 0, asm.Word),
		asm.SDiv.Reg(asm.R1, asm.R2),
		asm.SDiv.Imm(asm.R1, 8),
		asm.SMod.Reg(asm.R1, asm.R2),
		asm.SDiv.Reg32(asm.R1, asm.R2),
		asm.BSwap(asm.R1, asm.DWord),
		asm.LongJump("x"),
	}
	for _, ins := range v4 {
		if V4Form(ins) == "" {
			t.Errorf("%v: not recognized as ISA v4", ins)
		}
	}
	v3 := []asm.Instruction{
		asm.Mov.Reg(asm.R1, asm.R2),
		asm.Mov.Reg32(asm.R1, asm.R2),
		asm.LoadMem(asm.R1, asm.R2, 0, asm.Word),
		asm.Div.Reg(asm.R1, asm.R2),
		asm.Mod.Imm(asm.R1, 10),
		asm.HostTo(asm.BE, asm.R1, asm.DWord),
		asm.Ja.Label("x"),
		asm.JEq.Imm32(asm.R1, 0, "x"),
		asm.LSh.Imm(asm.R1, 32),
		asm.ArSh.Imm(asm.R1, 32),
	}
	for _, ins := range v3 {
		if s := V4Form(ins); s != "" {
			t.Errorf("%v: taken for ISA v4 %s", ins, s)
		}
	}
	if i, s := FirstV4(asm.Instructions{v3[0], v3[1], v4[3]}); i != 2 || s != "sign-extending load" {
		t.Errorf("FirstV4 = %d %q", i, s)
	}
}

func TestProbe(t *testing.T) {
	f := Probe()
	if f.Release == "" {
		t.Fatal("no release")
	}
	if Probe() != f {
		t.Error("Probe is not cached")
	}
	if f.ISA == 0 {
		t.Skip("BPF not available: ", f)
	}
	if f.ISA < ISAv2 || f.ISA > ISAv4 {
		t.Errorf("ISA %d", f.ISA)
	}
	// ISA v4 arrived in 6.6.
	var major, minor int
	fmt.Sscanf(f.Release, "%d.%d", &major, &minor)
	if want := major > 6 || major == 6 && minor >= 6; want != (f.ISA == ISAv4) && os.Getenv(TestISAEnv) == "" {
		t.Errorf("kernel %s: ISA v%d", f.Release, f.ISA)
	}
	if f.CodegenISA() != f.ISA {
		t.Errorf("CodegenISA %d, ISA %d", f.CodegenISA(), f.ISA)
	}
	t.Logf("kernel %s: ISA v%d, BTF %v", f.Release, f.ISA, f.BTF)
}

func TestUnsupportedWording(t *testing.T) {
	err := Unsupported("fentry", nil)
	want := "fentry is not supported by kernel " + Probe().Release
	if err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	if !errors.Is(err, ebpf.ErrNotSupported) {
		t.Error("not ErrNotSupported")
	}
}

func TestHelperName(t *testing.T) {
	if got := helperName(asm.FnProbeReadKernelStr); got != "bpf_probe_read_kernel_str" {
		t.Errorf("got %q", got)
	}
	if got := helperName(asm.FnLoop); got != "bpf_loop" {
		t.Errorf("got %q", got)
	}
}

func TestLazyProbes(t *testing.T) {
	if Probe().ISA == 0 {
		t.Skip("BPF not available")
	}
	// Every kernel from 6.1 has these.
	for name, err := range map[string]error{
		"bpf_loop":        Helper(ebpf.Kprobe, asm.FnLoop),
		"kprobe programs": ProgramType(ebpf.Kprobe),
		"ringbuf":         MapType(ebpf.RingBuf),
	} {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// These depend on the kernel; they must answer in DTrace's words.
	for name, err := range map[string]error{"kprobe.multi": KprobeMulti(), "uprobe.multi": UprobeMulti(), "fentry": Fentry()} {
		if err != nil && errors.Is(err, ebpf.ErrNotSupported) && !strings.Contains(err.Error(), "is not supported by kernel") {
			t.Errorf("%s: %v", name, err)
		}
		t.Logf("%s: %v (%v)", name, err, errors.Unwrap(err))
	}
}
