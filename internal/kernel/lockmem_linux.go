//go:build linux

package kernel

import "golang.org/x/sys/unix"

// SetLockMem applies -x lockmem: the locked-memory limit (RLIMIT_MEMLOCK)
// that kernels before memory-cgroup accounting of BPF (5.11) charge maps
// to. Unset (negative) leaves the limit as it is. Without the capability
// to raise the hard limit, the soft limit is raised as far as the hard one
// allows and the error is returned for a warning: newer kernels do not
// charge BPF maps to this limit, so tracing may well work regardless.
func SetLockMem(n int64) error {
	if n < 0 {
		return nil
	}
	lim := uint64(n)
	if n == 1<<63-1 {
		lim = unix.RLIM_INFINITY
	}
	err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &unix.Rlimit{Cur: lim, Max: lim})
	if err == nil {
		return nil
	}
	var cur unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &cur) != nil {
		return err
	}
	if cur.Max != unix.RLIM_INFINITY && lim > cur.Max {
		lim = cur.Max
	} else {
		err = nil // the hard limit allows it: only the soft one moves
	}
	cur.Cur = lim
	if e := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &cur); e != nil {
		return e
	}
	return err
}
