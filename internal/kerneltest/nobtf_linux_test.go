//go:build linux

package kerneltest

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/kfeature"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// TestNoBTF runs dtrace as on a kernel without /sys/kernel/btf/vmlinux
// (kfeature.TestBTFEnv names a missing file): what needs no kernel
// types runs as before, and what does says that the kernel has no BTF.
func TestNoBTF(t *testing.T) {
	testprog.NeedRoot(t, "BPF")
	_, dtrace, prog := setup(t)
	run := func(args ...string) (string, error) {
		cmd := exec.Command(dtrace, args...)
		cmd.Env = append(os.Environ(), kfeature.TestBTFEnv+"=/nonexistent/vmlinux")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, c := range []struct{ prog, want string }{
		{`BEGIN { printf("hello %d\n", 6 * 7); exit(0); }`, "hello 42"},
		{`syscall::getppid:entry /pid == $target/ { @ = count(); } END { printa("getppid %@d\n", @); }`, "getppid " + calls},
		{`BEGIN { @[probename] = count(); exit(0); } END { printa("%s %@d\n", @); }`, "BEGIN 1"},
		{`profile-997 { @ = count(); } tick-200ms { exit(0); } END { printa("%@d\n", @); }`, ""},
	} {
		out, err := run("-q", "-n", c.prog, "-c", prog+" "+calls)
		if err != nil {
			t.Errorf("%s: %v\n%s", c.prog, err, out)
			continue
		}
		if got := strings.TrimSpace(out); c.want != "" && got != c.want {
			t.Errorf("%s: got %q, want %q", c.prog, got, c.want)
		}
	}
	out, err := run("-q", "-n", `BEGIN { trace(curthread->pid); exit(0); }`)
	if err == nil || !strings.Contains(out, "has no BTF (/nonexistent/vmlinux)") {
		t.Errorf("curthread->pid without BTF: %v\n%s", err, out)
	}
}
