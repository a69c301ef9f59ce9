// This file holds what the loader says when the kernel refuses a
// program: the verifier log cut to its cause, the source line of the
// failing instruction, and ISA checks before loading.

package loader

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/dtrace-go/dtrace/internal/kfeature"
	"github.com/dtrace-go/dtrace/provider"
)

// VerifierError is a program the kernel refused, with the verifier log
// and, when the log names an instruction, that instruction and its source
// annotation (the D position codegen attached with WithSource).
type VerifierError struct {
	Probe *provider.Probe
	// Log is the verifier output, one line per element.
	Log []string
	// Index is the index into the program's instructions of the last
	// instruction the verifier looked at, or -1.
	Index int
	// Insn is that instruction.
	Insn asm.Instruction
	// Source is its source annotation, or "".
	Source string
	// Feature, if set, is what the kernel lacks (an instruction set
	// version, a helper), named with the kernel's release.
	Feature error
	Err     error
}

func (e *VerifierError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "failed to enable '%s': ", e.Probe)
	if e.Feature != nil {
		b.WriteString(e.Feature.Error())
		if e.Source != "" {
			fmt.Fprintf(&b, " (at %s)", e.Source)
		}
		return b.String()
	}
	if len(e.Log) == 0 && errors.Is(e.Err, syscall.EFAULT) {
		// The verifier answers EFAULT when it gives up on a program with
		// more branches pending than it will hold (and on its own bugs),
		// and cilium/ebpf then drops the log.
		fmt.Fprintf(&b, "the BPF verifier of kernel %s gave up on the program: too many paths to check", kfeature.Probe().Release)
		if e.Source != "" {
			fmt.Fprintf(&b, " at %s", e.Source)
		}
		b.WriteString("; split the clause into smaller clauses")
		return b.String()
	}
	if len(e.Log) == 0 {
		fmt.Fprintf(&b, "kernel %s refused the program", kfeature.Probe().Release)
		if e.Source != "" {
			fmt.Fprintf(&b, " for %s", e.Source)
		}
		fmt.Fprintf(&b, ": %v", e.Err)
		return b.String()
	}
	fmt.Fprintf(&b, "the BPF verifier of kernel %s refused the program", kfeature.Probe().Release)
	if e.Source != "" {
		fmt.Fprintf(&b, " at %s", e.Source)
	}
	fmt.Fprintf(&b, ": %s (-S shows the verifier log)", lastLogLine(e.Log))
	return b.String()
}

// lastLogLine is the verifier's reason: its last non-empty line that
// is not the statistics trailer.
func lastLogLine(log []string) string {
	for i := len(log) - 1; i >= 0; i-- {
		l := strings.TrimSpace(log[i])
		if l == "" || strings.HasPrefix(l, "processed ") || strings.HasPrefix(l, "verification time") || strings.HasPrefix(l, "stack depth") {
			continue
		}
		return l
	}
	return "no reason given"
}

// writeUserFeature names what copyout() and copyoutstr() need when the
// kernel refuses its BPF programs bpf_probe_write_user: lockdown
// (integrity and above) forbids it, whatever the program's type.
func writeUserFeature() string {
	why := ""
	if mode := kfeature.Lockdown(); mode != "" {
		why = fmt.Sprintf(", which lockdown %q forbids", mode)
	}
	return "writing user memory with copyout() or copyoutstr() (helper bpf_probe_write_user" + why + ")"
}

// unknownHelper matches the verifier's refusal of a helper the kernel
// lacks ("unknown func bpf_loop#181", "invalid func unknown#212").
// Compiled when first used, not at package init: every start-up pays for init.
var unknownHelper = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:unknown|invalid) func (\w+)#(\d+)`) })

// attachError words a failed attachment as dtrace does, naming the
// probe and, for what the kernel lacks, the kernel:
// "failed to enable 'fbt::vfs_read:entry': fentry is not supported by
// kernel 6.1.0-56-amd64".
func attachError(p *provider.Probe, err error) error {
	var ns *kfeature.NotSupportedError
	switch {
	case errors.As(err, &ns):
		return fmt.Errorf("failed to enable '%s': %w", p, ns)
	case errors.Is(err, ebpf.ErrNotSupported):
		return fmt.Errorf("failed to enable '%s': not supported by kernel %s: %w", p, kfeature.Probe().Release, err)
	}
	return fmt.Errorf("failed to enable '%s': %w", p, err)
}

// checkISA refuses, in DTrace's words, instructions of a newer
// instruction set than the running kernel's, which its verifier would
// reject with "BPF_MOV uses reserved fields" or "unknown opcode".
func checkISA(p *provider.Probe, insns asm.Instructions) error {
	return checkISAFor(p, insns, kfeature.Probe().ISA)
}

// checkISAFor is checkISA for a kernel of instruction set isa (0:
// unknown).
func checkISAFor(p *provider.Probe, insns asm.Instructions, isa int) error {
	if isa == 0 || isa >= kfeature.ISAv4 {
		return nil
	}
	i, form := kfeature.FirstV4(insns)
	if i < 0 {
		return nil
	}
	ve := &VerifierError{Probe: p, Index: i, Insn: insns[i]}
	ve.Source = sourceOf(insns, i)
	ve.Feature = kfeature.Unsupported("BPF instruction set v4 ("+form+")", nil)
	ve.Err = ve.Feature
	return ve
}

// sourceOf is the source annotation of insns[i], or of the nearest
// annotated instruction before it.
func sourceOf(insns asm.Instructions, i int) string {
	for j := i; j >= 0; j-- {
		if s := insns[j].Source(); s != nil {
			return s.String()
		}
	}
	return ""
}

func (e *VerifierError) Unwrap() error { return e.Err }

// Compiled when first used, not at package init: every start-up pays for init.
var logInsn = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d+): \(`) })

func newVerifierError(p *provider.Probe, insns asm.Instructions, err error) error {
	ve := &VerifierError{Probe: p, Index: -1, Err: err}
	var kve *ebpf.VerifierError
	if !errors.As(err, &kve) {
		return ve
	}
	ve.Log = kve.Log
	for _, line := range kve.Log {
		if strings.Contains(line, "cannot use helper bpf_probe_write_user") {
			ve.Feature = kfeature.Unsupported(writeUserFeature(), nil)
		}
		if m := unknownHelper().FindStringSubmatch(line); m != nil {
			name := m[1]
			if name == "unknown" {
				name = "#" + m[2]
			}
			ve.Feature = kfeature.Unsupported("helper "+name, nil)
		}
	}
	raw := -1
	for _, line := range kve.Log {
		if m := logInsn().FindStringSubmatch(line); m != nil {
			raw, _ = strconv.Atoi(m[1])
		}
	}
	if raw < 0 {
		return ve
	}
	off := 0
	for i, ins := range insns {
		if off == raw {
			ve.Index, ve.Insn = i, ins
			ve.Source = sourceOf(insns, i)
			break
		}
		off += int(ins.Size() / asm.InstructionSize)
	}
	return ve
}

// annotateFunctions gives every labelled instruction without a source
// annotation its label as source, when any instruction has one: cilium/ebpf
// turns annotations into BTF line info, and the kernel then wants line info
// at the start of every function. It reports whether the program needs
// BTF func info (a function pointer: bpf_loop callbacks), which it adds.
func annotateFunctions(insns asm.Instructions) bool {
	// Function entries: the program's first instruction and every target
	// of a BPF-to-BPF call or of a function pointer (bpf_loop callbacks).
	entries := map[string]bool{}
	if len(insns) > 0 {
		entries[insns[0].Symbol()] = true
	}
	funcPtr := false
	for _, ins := range insns {
		if ins.IsFunctionCall() || ins.IsLoadOfFunctionPointer() {
			entries[ins.Reference()] = true
		}
		if ins.IsLoadOfFunctionPointer() {
			funcPtr = true
		}
	}
	any := funcPtr
	for _, ins := range insns {
		if ins.Source() != nil {
			any = true
			break
		}
	}
	if !any {
		return false
	}
	for i, ins := range insns {
		if ins.Symbol() != "" && ins.Source() == nil {
			insns[i] = ins.WithSource(asm.Comment(ins.Symbol()))
		}
	}
	if !funcPtr {
		return false
	}
	// A function pointer (bpf_loop) needs BTF func info for every
	// function of the program.
	for i, ins := range insns {
		if sym := ins.Symbol(); sym != "" && entries[sym] {
			insns[i] = btf.WithFuncMetadata(ins, &btf.Func{Name: btfName(sym), Type: funcProto, Linkage: btf.StaticFunc})
		}
	}
	return true
}

// withoutSources returns a copy of insns without source annotations, so
// that cilium/ebpf loads no BTF line info for them; insns when none has
// one.
func withoutSources(insns asm.Instructions) asm.Instructions {
	var out asm.Instructions
	for i, ins := range insns {
		if ins.Source() == nil {
			continue
		}
		if out == nil {
			out = make(asm.Instructions, len(insns))
			copy(out, insns)
		}
		out[i] = ins.WithSource(nil)
	}
	if out == nil {
		return insns
	}
	return out
}

// funcProto is the BTF type given to every generated function: the
// verifier reads the actual registers of static functions, not these.
var funcProto = &btf.FuncProto{
	Return: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed},
	Params: []btf.FuncParam{
		{Name: "a", Type: &btf.Int{Name: "unsigned long", Size: 8}},
		{Name: "b", Type: &btf.Int{Name: "unsigned long", Size: 8}},
	},
}

// btfName makes a C identifier of a symbol.
func btfName(sym string) string {
	b := []byte(sym)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' && i > 0) {
			b[i] = '_'
		}
	}
	return string(b)
}
