package output

import _ "unsafe" // for go:linkname

// nanotime is the Go runtime's clock: CLOCK_MONOTONIC, read through the
// vDSO (no system call, which matters in an emulated guest, where the
// agent stamps its clock samples with it).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Monotonic reads CLOCK_MONOTONIC in nanoseconds, the clock the kernel
// stamps records with.
func Monotonic() uint64 { return uint64(nanotime()) }
