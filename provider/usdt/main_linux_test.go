//go:build linux

package usdt_test

import (
	"os"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/leakcheck"
)

// TestMain fails the run if tracing left BPF or perf-event descriptors
// open: every uprobe must be closed with its session.
func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }
