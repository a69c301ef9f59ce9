//go:build !linux

package ktypes

import "github.com/cilium/ebpf/btf"

// Open returns an empty set of kernel types: kernel types come from
// Linux's BTF. Every lookup fails and Err says why.
func Open() *Types {
	return New(Source{})
}

// FromCache is Open; cache is not used.
func FromCache(cache *btf.Cache) *Types {
	return New(Source{})
}
