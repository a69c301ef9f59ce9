//go:build linux

package edgetest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/guesttest"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// guestEnv, when set, lets TestGuest boot the guests (a few minutes).
const guestEnv = "DTRACE_EDGES_GUEST"

// guestTests are the tests TestGuest runs in each guest: those whose
// behaviour depends on the kernel (the code it verifies, the buffers it
// offers). TestFillEndsRun stays on the host: filling 32m at 4000 Hz
// takes a minute here and far longer under emulation.
const guestTests = "^(TestExitFirst|TestStoreThroughCast|TestPrintVoidPointer|TestStrtollMany|TestRingSmallBuffer|TestSignalsUnderFlood)$"

// TestGuest runs guestTests in Debian's 6.12 and 6.1 (ISA v3) kernels
// under ../shared/vm/run-kernel, with this test binary and the dtrace it
// tests copied where the guest sees them.
func TestGuest(t *testing.T) {
	if os.Getenv(guestEnv) == "" {
		t.Skip("set " + guestEnv + "=1 to run these tests in the 6.12 and 6.1 guests (by hand: .ci/run does not, about 25 minutes each under load)")
	}
	if os.Getenv(binEnv) != "" {
		t.Skip("already in a guest")
	}
	testprog.NeedRoot(t, "BPF")
	guesttest.RunKernel(t)
	dir := guesttest.Dir(t, ".guest-edgetest-")
	data, err := os.ReadFile(dtraceBin)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "dtrace")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	self := guesttest.Self(t, dir, "edgetest.test")
	for _, k := range guesttest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			cmd := "uname -r; " + slowEnv + "=20 " + binEnv + "=" + bin + " " + self + " -test.v -test.run '" + guestTests + "'"
			out, err := guesttest.Run(t, append(append([]string{}, k.Opts...), "-m", "2048", "-c", "2", "-t", "1500", cmd)...)
			t.Logf("guest:\n%s", out)
			if err != nil {
				t.Fatalf("guest: %v", err)
			}
			// run-kernel's own line names the kernel it booted.
			if !bytes.Contains(out, []byte("guest kernel "+k.Name+".")) {
				t.Errorf("guest kernel is not %s", k.Name)
			}
			if bytes.Contains(out, []byte("--- FAIL")) || !bytes.Contains(out, []byte("\nPASS\n")) {
				t.Errorf("guest tests failed")
			}
		})
	}
}
