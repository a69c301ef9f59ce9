package syscall_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestMain fails the run if the tests leave BPF objects or perf events
// open: a leaked one keeps a program in the kernel.
func TestMain(m *testing.M) {
	before := kernelFDs()
	code := m.Run()
	if after := kernelFDs(); code == 0 && after > before {
		fmt.Fprintf(os.Stderr, "%d BPF or perf event descriptors leaked\n", after-before)
		code = 1
	}
	os.Exit(code)
}

// kernelFDs counts the open descriptors of BPF objects and perf events
// (the Go runtime opens descriptors of its own, which do not count).
func kernelFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	n := 0
	for _, e := range ents {
		l, _ := os.Readlink("/proc/self/fd/" + e.Name())
		if strings.HasPrefix(l, "anon_inode:bpf") || strings.HasPrefix(l, "anon_inode:[perf_event]") {
			n++
		}
	}
	return n
}
