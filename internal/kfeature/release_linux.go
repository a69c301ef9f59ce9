//go:build linux

package kfeature

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// release returns uname -r.
func release() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// attachTracing attaches a loaded fentry program and detaches it again.
func attachTracing(prog *ebpf.Program) error {
	l, err := link.AttachTracing(link.TracingOptions{Program: prog})
	if err != nil {
		return err
	}
	return l.Close()
}

// attachKprobeMulti attaches an empty kprobe.multi program to fn and
// detaches it again.
func attachKprobeMulti(fn string) error {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:         ebpf.Kprobe,
		AttachType:   ebpf.AttachTraceKprobeMulti,
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
		License:      "GPL",
	})
	if err != nil {
		return err
	}
	defer prog.Close()
	l, err := link.KprobeMulti(prog, link.KprobeMultiOptions{Symbols: []string{fn}})
	if err != nil {
		return err
	}
	return l.Close()
}
