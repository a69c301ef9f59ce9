// Package leakcheck fails a test binary whose tests leave BPF objects or
// perf events open: a leaked descriptor keeps a program in the kernel, so
// every one must be closed with the session that opened it.
package leakcheck

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// KernelFDs counts this process's open descriptors of BPF objects and perf
// events (the Go runtime's own descriptors do not count).
func KernelFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	n := 0
	for _, e := range ents {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err == nil && (strings.HasPrefix(target, "anon_inode:bpf") || target == "anon_inode:[perf_event]") {
			n++
		}
	}
	return n
}

// Run runs the tests, as a TestMain does, and returns the exit code: 1 if
// they passed but left more kernel descriptors open than there were before.
func Run(m *testing.M) int {
	before := KernelFDs()
	code := m.Run()
	if after := KernelFDs(); code == 0 && after > before {
		fmt.Fprintf(os.Stderr, "leaked %d BPF/perf file descriptors\n", after-before)
		code = 1
	}
	return code
}
