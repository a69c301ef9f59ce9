package agent

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// vsockLocal lets the local CID (1, the loopback transport) connect to
// an agent's vsock port as well as the host: for tests that run the host
// and the agent in one guest. dtrace itself admits only the host.
var vsockLocal atomic.Bool

// vsockPort parses a vsock port number.
func vsockPort(s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("bad vsock port %q", s)
	}
	return uint32(n), nil
}

// dialVsock connects to an agent at CID:PORT.
func dialVsock(addr string) (stream, error) {
	cids, ports, _ := strings.Cut(addr, ":")
	cid, err := strconv.ParseUint(cids, 10, 32)
	port, perr := vsockPort(ports)
	if err != nil || perr != nil {
		return nil, fmt.Errorf("bad vsock address vsock:%s: want vsock:CID:PORT", addr)
	}
	fd, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("vsock: %v", err)
	}
	// A connection is made or refused within the kernel's connect
	// timeout (2 s by default).
	if err := unix.Connect(fd, &unix.SockaddrVM{CID: uint32(cid), Port: port}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("connect to vsock:%s: %v", addr, err)
	}
	return pollable(fd, "vsock:"+addr)
}

// pollable makes fd an *os.File on Go's poller, whose reads can be
// bounded by deadlines.
func pollable(fd int, name string) (*os.File, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// acceptVsock listens on vsock port and returns the first connection of
// the host (CID 2); it closes any other, saying so on logw.
func acceptVsock(ports string, logw io.Writer) (*os.File, error) {
	port, err := vsockPort(ports)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("vsock: %v", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrVM{CID: unix.VMADDR_CID_ANY, Port: port}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("vsock port %d: %v", port, err)
	}
	if err := unix.Listen(fd, 4); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("vsock port %d: %v", port, err)
	}
	l, err := pollable(fd, "vsock:"+ports)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	rc, err := l.SyscallConn()
	if err != nil {
		return nil, err
	}
	for {
		var nfd int
		var sa unix.Sockaddr
		var aerr error
		if err := rc.Read(func(lfd uintptr) bool {
			nfd, sa, aerr = unix.Accept4(int(lfd), unix.SOCK_CLOEXEC)
			return aerr != unix.EAGAIN
		}); err != nil {
			return nil, err
		}
		if aerr != nil {
			return nil, fmt.Errorf("vsock port %d: %v", port, aerr)
		}
		cid := uint32(unix.VMADDR_CID_ANY)
		if vm, ok := sa.(*unix.SockaddrVM); ok {
			cid = vm.CID
		}
		if cid == unix.VMADDR_CID_HOST || vsockLocal.Load() && cid == unix.VMADDR_CID_LOCAL {
			return pollable(nfd, "vsock:"+ports)
		}
		fmt.Fprintf(logw, "dtrace: agent: refused a vsock connection from CID %d: only the host (CID %d) may connect\n",
			cid, unix.VMADDR_CID_HOST)
		unix.Close(nfd)
	}
}
