package agent

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// waitReadable waits, blocked in the kernel, at most timeoutMs for fd of
// rc to have something to read (or to be hung up); the read that follows
// finds out which. A clock sample's receive time is taken right after
// that read: the kernel wakes the waiting thread as data comes, as it
// wakes a process blocked in read(2). Waiting in Go's network poller, the
// reading goroutine would first have to be scheduled, which in an
// emulated guest added a hundred microseconds or more to every receive
// time.
func waitReadable(rc syscall.RawConn, timeoutMs int) {
	rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, timeoutMs); err != unix.EINTR {
				return
			}
		}
	})
}
