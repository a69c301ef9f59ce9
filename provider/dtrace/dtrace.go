package dtrace

import (
	"errors"
	"io"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/provider"
)

// The probe names, in id order.
const (
	Begin = "BEGIN"
	End   = "END"
	Error = "ERROR"
)

// ErrNotAttachable is returned by Attach: dtrace probes are fired by the
// library, not by the kernel.
var ErrNotAttachable = errors.New("dtrace provider probes are not attached; run them with BPF_PROG_TEST_RUN")

// Provider is the dtrace provider. The zero value is ready to use.
type Provider struct{}

// New returns the dtrace provider.
func New() *Provider { return &Provider{} }

// Name returns "dtrace".
func (*Provider) Name() string { return "dtrace" }

// Probes returns BEGIN, END and ERROR where they match d.
func (*Provider) Probes(d provider.Desc) ([]*provider.Probe, error) {
	var out []*provider.Probe
	for _, n := range []string{Begin, End, Error} {
		if d.MatchesIn("", "", n) {
			out = append(out, &provider.Probe{Provider: "dtrace", Name: n})
		}
	}
	return out, nil
}

// Program says: a raw tracepoint program, test-run only.
func (*Provider) Program(*provider.Probe) provider.ProgramKind {
	return provider.ProgramKind{Type: ebpf.RawTracepoint, TestRun: true}
}

// Prologue copies the test-run context (u64 arg[10]) into the machine state.
func (*Provider) Prologue(_ *provider.Probe, mstate int16) asm.Instructions {
	return provider.CopyArgs(0, abi.MStateNArgs, mstate)
}

// Attach always fails with ErrNotAttachable.
func (*Provider) Attach(*provider.Probe, *ebpf.Program) (io.Closer, error) {
	return nil, ErrNotAttachable
}

// ArgTypes returns the types of the probe's args[]: BEGIN, END and ERROR
// have none (ERROR's values are arg1..arg5), so args[0] is out of range.
func (*Provider) ArgTypes(*provider.Probe) ([]string, error) {
	return []string{}, nil
}
