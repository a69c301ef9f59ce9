package kfeature

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/features"
)

// ISA versions of the BPF instruction set (the kernel's "cpu=v2" etc.).
const (
	// ISAv2 adds the jumps JLT, JLE, JSLT, JSLE (4.14).
	ISAv2 = 2
	// ISAv3 adds the 32-bit jumps of the JMP32 class (5.1).
	ISAv3 = 3
	// ISAv4 adds sign-extending moves and loads, signed division and
	// modulo, unconditional byte swaps and 32-bit jump offsets (6.6).
	ISAv4 = 4
)

// DefaultBTFPath is where the kernel publishes its BTF.
const DefaultBTFPath = "/sys/kernel/btf/vmlinux"

// TestBTFEnv names an environment variable that, when set, replaces
// DefaultBTFPath. It is for tests only: pointing it at a missing file
// makes this process behave as on a kernel without BTF.
const TestBTFEnv = "DTRACE_TEST_VMLINUX_BTF"

// TestISAEnv names an environment variable that, when set to 2, 3 or 4,
// caps the instruction set Probe reports. It is for tests only: the
// code for 6.1 (v3) then runs on the host's newer kernel, which accepts
// it too.
const TestISAEnv = "DTRACE_TEST_ISA"

// Features is what the running kernel offers, probed at start-up.
type Features struct {
	// Release is the kernel release (uname -r), as errors name it.
	Release string
	// ISA is the newest BPF instruction set version the verifier
	// accepts: ISAv2, ISAv3 or ISAv4 (0 if BPF could not be probed,
	// for example without privileges).
	ISA int
	// BTFPath is the kernel's BTF file; BTF says whether it exists.
	BTFPath string
	BTF     bool
}

var probe = sync.OnceValue(func() *Features {
	f := &Features{Release: release(), BTFPath: DefaultBTFPath}
	if p, ok := os.LookupEnv(TestBTFEnv); ok {
		f.BTFPath = p
	}
	if _, err := os.Stat(f.BTFPath); err == nil {
		f.BTF = true
	}
	switch {
	case haveV4() == nil:
		f.ISA = ISAv4
	case features.HaveV3ISA() == nil:
		f.ISA = ISAv3
	case features.HaveV2ISA() == nil:
		f.ISA = ISAv2
	}
	if v, err := strconv.Atoi(os.Getenv(TestISAEnv)); err == nil && v >= ISAv2 && v < f.ISA {
		f.ISA = v
	}
	return f
})

// Probe returns the running kernel's features, probing them on the first
// call.
func Probe() *Features { return probe() }

// haveV4 loads a program with the v4 forms code generation uses: a
// sign-extending move and load and a signed division. cilium/ebpf's
// HaveV4ISA tests a 32-bit jump instead, which Debian's 6.1 accepts
// although it has none of these.
func haveV4() error {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type: ebpf.SocketFilter,
		Instructions: asm.Instructions{
			asm.Mov.Imm(asm.R0, -1),
			asm.StoreMem(asm.R10, -8, asm.R0, asm.DWord),
			asm.LoadMemSX(asm.R0, asm.R10, -8, asm.Word),
			asm.MovSX8.Reg(asm.R0, asm.R0),
			asm.SDiv.Imm(asm.R0, -1),
			asm.Return(),
		},
		License: "GPL",
	})
	if err != nil {
		return err
	}
	return prog.Close()
}

// CodegenISA is the instruction set code generation should target: the
// probed one, or ISAv4 when probing failed (the load then fails with the
// kernel's own reason, as before).
func (f *Features) CodegenISA() int {
	if f.ISA == 0 {
		return ISAv4
	}
	return f.ISA
}

// NotSupportedError is a feature the running kernel lacks.
type NotSupportedError struct {
	// Feature names it as DTrace words it ("fentry", "BTF",
	// "helper bpf_loop").
	Feature string
	// Release is the kernel release.
	Release string
	// Err is the probe's error, if any.
	Err error
}

func (e *NotSupportedError) Error() string {
	return fmt.Sprintf("%s is not supported by kernel %s", e.Feature, e.Release)
}

// Is makes a NotSupportedError match ebpf.ErrNotSupported.
func (e *NotSupportedError) Is(target error) bool { return target == ebpf.ErrNotSupported }

func (e *NotSupportedError) Unwrap() error { return e.Err }

// Unsupported returns a NotSupportedError for feature on this kernel.
func Unsupported(feature string, err error) error {
	return &NotSupportedError{Feature: feature, Release: Probe().Release, Err: err}
}

// check turns a cilium/ebpf feature test result into a NotSupportedError
// when the kernel lacks the feature; other errors (no privileges) pass.
func check(feature string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ebpf.ErrNotSupported) {
		return Unsupported(feature, err)
	}
	return fmt.Errorf("probing %s: %w", feature, err)
}

// Helper reports whether programs of type pt may call helper fn.
func Helper(pt ebpf.ProgramType, fn asm.BuiltinFunc) error {
	return check("helper "+helperName(fn), features.HaveProgramHelper(pt, fn))
}

// helperName is the kernel's name of a helper (bpf_loop).
func helperName(fn asm.BuiltinFunc) string {
	s := fn.String()
	if len(s) > 2 && s[:2] == "Fn" {
		return "bpf_" + snake(s[2:])
	}
	return s
}

// snake turns "ProbeReadKernel" into "probe_read_kernel".
func snake(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			if i > 0 {
				b = append(b, '_')
			}
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b)
}

// ProgramType reports whether the kernel loads programs of type pt.
func ProgramType(pt ebpf.ProgramType) error {
	return check(pt.String()+" programs", features.HaveProgramType(pt))
}

// MapType reports whether the kernel creates maps of type mt.
func MapType(mt ebpf.MapType) error {
	return check(mt.String()+" maps", features.HaveMapType(mt))
}

// KprobeMulti reports whether the kernel attaches one kprobe program to
// many functions with one link (kprobe.multi, 5.18, needs
// CONFIG_FPROBE, which Debian's 6.1 lacks).
func KprobeMulti() error {
	return check("kprobe.multi", features.HaveBPFLinkKprobeMulti())
}

// UprobeMulti reports whether the kernel attaches one uprobe program to
// many offsets with one link (uprobe.multi, 6.6).
func UprobeMulti() error {
	return check("uprobe.multi", features.HaveBPFLinkUprobeMulti())
}

// Fentry reports whether the kernel attaches fentry programs: it loads
// one for a function every kernel with BTF has and attaches it, which
// fails where the kernel has no ftrace direct calls (this machine's
// 6.18). It needs BTF.
func Fentry() error { return fentry() }

var fentry = sync.OnceValue(func() error {
	if !Probe().BTF {
		return Unsupported("fentry (it needs BTF)", noBTF())
	}
	spec, err := KernelSpec()
	if err != nil {
		return fmt.Errorf("probing fentry: %w", err)
	}
	prog, err := ebpf.NewProgramWithOptions(&ebpf.ProgramSpec{
		Type:         ebpf.Tracing,
		AttachType:   ebpf.AttachTraceFEntry,
		AttachTo:     fentryTarget,
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
		License:      "GPL",
	}, ebpf.ProgramOptions{KernelTypes: spec})
	if err != nil {
		return check("fentry", asNotSupported(err))
	}
	defer prog.Close()
	return check("fentry", asNotSupported(attachTracing(prog)))
})

// fentryTarget is a function made for testing BPF trampolines, built
// into every kernel with BPF and networking.
const fentryTarget = "bpf_fentry_test1"

// asNotSupported treats the kernel's refusals as the feature missing.
// EPERM too, when the process could load the ISA probe: 6.18 without
// ftrace direct calls refuses fentry programs so.
func asNotSupported(err error) error {
	if err == nil || errors.Is(err, ebpf.ErrNotSupported) {
		return err
	}
	if errors.Is(err, os.ErrPermission) && Probe().ISA == 0 {
		return err
	}
	return fmt.Errorf("%w: %w", ebpf.ErrNotSupported, err)
}

// NoBTFError is the error of whatever needs kernel types on a kernel
// without BTF.
type NoBTFError struct {
	Release, Path string
}

func (e *NoBTFError) Error() string {
	return fmt.Sprintf("kernel %s has no BTF (%s)", e.Release, e.Path)
}

// Is makes a NoBTFError match ebpf.ErrNotSupported and os.ErrNotExist.
func (e *NoBTFError) Is(target error) bool {
	return target == ebpf.ErrNotSupported || target == os.ErrNotExist
}

// noBTF returns a NoBTFError for this kernel.
func noBTF() error {
	f := Probe()
	return &NoBTFError{Release: f.Release, Path: f.BTFPath}
}

// KernelSpec loads the kernel's BTF (cached by cilium/ebpf), or fails
// with a NoBTFError on a kernel without it (or when the test override
// names a missing file).
func KernelSpec() (*btf.Spec, error) {
	f := Probe()
	if !f.BTF {
		return nil, noBTF()
	}
	if f.BTFPath != DefaultBTFPath {
		return btfFromFile()
	}
	return btf.LoadKernelSpec()
}

// CheckBTF returns a NoBTFError on a kernel without BTF, nil otherwise.
func CheckBTF() error {
	if !Probe().BTF {
		return noBTF()
	}
	return nil
}

var btfFromFile = sync.OnceValues(func() (*btf.Spec, error) {
	return btf.LoadSpec(Probe().BTFPath)
})

// ReadBTF returns the raw bytes of the kernel's BTF.
func ReadBTF() ([]byte, error) {
	f := Probe()
	if !f.BTF {
		return nil, noBTF()
	}
	return os.ReadFile(f.BTFPath)
}

// Lockdown is the kernel's lockdown mode ("integrity", "confidentiality")
// as securityfs shows it, or "" when it is "none" or cannot be read: in
// lockdown, BPF programs may not write user memory, among others.
func Lockdown() string {
	b, err := os.ReadFile("/sys/kernel/security/lockdown")
	if err != nil {
		return ""
	}
	s := string(b)
	i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']')
	if i < 0 || j < i || s[i+1:j] == "none" {
		return ""
	}
	return s[i+1 : j]
}
