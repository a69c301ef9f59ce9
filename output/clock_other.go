//go:build !linux

package output

import "time"

var start = time.Now()

// Monotonic reads a monotonic clock in nanoseconds (elsewhere than
// Linux, from the package's start: records carry no kernel time there).
func Monotonic() uint64 { return uint64(time.Since(start)) }
