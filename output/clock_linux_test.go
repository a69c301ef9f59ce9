package output

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestMonotonic: Monotonic reads the clock clock_gettime(CLOCK_MONOTONIC)
// reads: each reading lies between two of the system call's.
func TestMonotonic(t *testing.T) {
	read := func() uint64 {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			t.Fatal(err)
		}
		return uint64(ts.Nano())
	}
	for i := 0; i < 100; i++ {
		before := read()
		m := Monotonic()
		after := read()
		if m < before || m > after {
			t.Fatalf("Monotonic %d outside [%d, %d]", m, before, after)
		}
	}
}
