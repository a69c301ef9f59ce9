package dtrace

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// onCPU runs fn in a thread bound to cpu for the call (and as it was
// bound before afterwards); where it cannot bind (cpu < 0, a CPU the
// process may not run on), fn runs wherever the thread is.
func onCPU(cpu int, fn func() error) error {
	if cpu < 0 {
		return fn()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil || !old.IsSet(cpu) {
		return fn()
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fn()
	}
	defer unix.SchedSetaffinity(0, &old)
	return fn()
}
