package agent

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// waitReadable waits, blocked in the kernel, at most timeoutMs for fd of
// rc to have something to read (or to be hung up), and says whether it
// has. It is how a clock sample's receive time is taken: a thread the
// kernel wakes as data comes, as it wakes a process blocked in read(2),
// stamps it at once; Go's network poller would first have to schedule
// the reading goroutine, which in an emulated guest adds a hundred
// microseconds or more to every receive time.
func waitReadable(rc syscall.RawConn, timeoutMs int) bool {
	ready := false
	err := rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, timeoutMs)
			if err == unix.EINTR {
				continue
			}
			ready = err == nil && n > 0
			return
		}
	})
	return err == nil && ready
}
