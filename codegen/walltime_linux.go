package codegen

import "golang.org/x/sys/unix"

// taiOffset is how far CLOCK_TAI, the wall clock BPF can read, runs
// ahead of CLOCK_REALTIME: the kernel's TAI offset, which a time daemon
// may set (37 s since 2017) and most leave at 0, so it is read, not
// assumed.
func taiOffset() int64 {
	var tx unix.Timex
	if _, err := unix.Adjtimex(&tx); err != nil {
		return 0
	}
	return int64(tx.Tai) * 1e9
}
