package perfetto

import "golang.org/x/sys/unix"

// Monotonic reads CLOCK_MONOTONIC in nanoseconds, the clock the kernel
// stamps records with.
func Monotonic() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return uint64(ts.Nano())
}
