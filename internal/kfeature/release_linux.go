//go:build linux

package kfeature

import (
	"github.com/cilium/ebpf"
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
