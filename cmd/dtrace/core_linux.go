package main

import (
	"fmt"
	"io"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dumpCore ends dtrace with a core dump (-x core): the core size limit
// is lifted, SIGABRT gets its default action back from Go's handler (a
// raw rt_sigaction: the runtime's own reset keeps its handler), and the
// thread sends itself SIGABRT, which the kernel answers by writing the
// core as core_pattern says.
func dumpCore(stderr io.Writer) {
	fmt.Fprintln(stderr, "dtrace: dumping core (-x core)")
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY})
	// struct sigaction as the kernel reads it: handler, flags,
	// restorer, mask. A zero handler is SIG_DFL.
	var act [4]uint64
	_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGABRT), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	_ = unix.Tgkill(unix.Getpid(), unix.Gettid(), unix.SIGABRT)
	select {} // the signal ends the process
}
