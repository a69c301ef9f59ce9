package syscall_test

import (
	"os"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/leakcheck"
)

// TestMain fails the run if the tests leave BPF objects or perf events
// open: a leaked one keeps a program in the kernel.
func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }
