//go:build linux

package ktypes

import (
	"os"

	"github.com/cilium/ebpf/btf"

	"github.com/dtrace-go/dtrace/internal/kfeature"
)

// Open returns the running kernel's types and symbols: BTF from
// /sys/kernel/btf (vmlinux and one file per module) and symbols from
// /proc/kallsyms, each read when first needed.
func Open() *Types {
	return FromCache(btf.NewCache())
}

// FromCache is Open with kernel BTF shared through cache, so that the
// loader and the checker map and decode it once.
func FromCache(cache *btf.Cache) *Types {
	return New(Source{
		// Without kernel BTF (kfeature.CheckBTF) there are no kernel
		// or module types.
		Kernel: func() (*btf.Spec, error) {
			if err := kfeature.CheckBTF(); err != nil {
				return nil, err
			}
			return cache.Kernel()
		},
		Module: func(name string) (*btf.Spec, error) {
			if err := kfeature.CheckBTF(); err != nil {
				return nil, err
			}
			return cache.Module(name)
		},
		Symbols: func() (*Symbols, error) {
			f, err := os.Open("/proc/kallsyms")
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return ParseKallsyms(f)
		},
	})
}
