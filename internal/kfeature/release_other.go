//go:build !linux

package kfeature

import (
	"runtime"

	"github.com/cilium/ebpf"
)

func release() string { return runtime.GOOS }

func attachTracing(*ebpf.Program) error { return ebpf.ErrNotSupported }
