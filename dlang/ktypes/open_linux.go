//go:build linux

package ktypes

import (
	"os"

	"github.com/cilium/ebpf/btf"
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
		Kernel: cache.Kernel,
		Module: cache.Module,
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
