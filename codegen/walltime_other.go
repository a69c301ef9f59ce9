//go:build !linux

package codegen

// taiOffset is 0 where the kernel's TAI offset cannot be read: BPF
// programs run on Linux only.
func taiOffset() int64 { return 0 }
