//go:build !linux

package pid

import (
	"errors"
	"io"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/provider"
)

// Attach fails: uprobes are Linux's.
func (*Provider) Attach(*provider.Probe, *ebpf.Program) (io.Closer, error) {
	return nil, errors.New("pid provider: uprobes need Linux")
}

// AttachSites fails: uprobes are Linux's.
func AttachSites([]Site, int, bool, *ebpf.Program) (io.Closer, error) {
	return nil, errors.New("uprobes need Linux")
}

// ProgramKind is the program kind of uprobe programs.
func ProgramKind() provider.ProgramKind {
	return provider.ProgramKind{Type: ebpf.Kprobe}
}

// siteCookie is nil: bpf_get_attach_cookie.
func siteCookie(*Probe, *Regs) asm.Instructions { return nil }
