//go:build linux

package usdt_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestMain fails the run if tracing left BPF or perf-event descriptors
// open: every uprobe must be closed with its session.
func TestMain(m *testing.M) {
	before := bpfFDs()
	code := m.Run()
	if after := bpfFDs(); code == 0 && after > before {
		fmt.Fprintf(os.Stderr, "leaked %d BPF/perf file descriptors\n", after-before)
		code = 1
	}
	os.Exit(code)
}

func bpfFDs() int {
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
