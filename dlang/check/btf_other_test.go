//go:build !linux

package check

// kernelForTest returns nil: kernel types come from Linux BTF.
func kernelForTest() Kernel { return nil }
