//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/dtrace-go/dtrace/agent"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/output/perfetto"
)

// serveAgent serves one host on a socket from this test process: a
// guest that is this machine.
func serveAgent(t *testing.T) (sock string, done <-chan error) {
	sock = filepath.Join(t.TempDir(), "vm.sock")
	done, err := agent.ServeSocket(sock, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return sock, done
}

// TestGuestLocal runs dtrace -x guest against an agent on this machine:
// the same process is seen by the host and by the "guest" vm1, so each
// counts its 1,234 getppid calls under its own name, and printf lines
// carry the machine column; with -x oformat=perfetto both machines'
// slices are in one valid file.
func TestGuestLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dtrace")
	}
	bin := buildDtrace(t)
	calls := testprog.Build(t, "guestcalls", []string{"calls.c"})
	sock, served := serveAgent(t)
	prog := `syscall::getppid:entry /execname == "guestcalls"/ { @[probefunc] = count(); }
		syscall::getppid:entry /execname == "guestcalls" && !done/ { done = 1; printf("first\n"); }`
	cmd := exec.Command(bin, "-q", "-x", "guest=vm1="+sock, "-n", prog, "-c", calls+" 1234")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if err := <-served; err != nil {
		t.Fatalf("agent: %v", err)
	}
	out := stdout.String()
	for _, re := range []string{`(?m)^host  first$`, `(?m)^vm1   first$`, `(?m)^  host +getppid +1234$`, `(?m)^  vm1 +getppid +1234$`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("no %s in\n%s", re, out)
		}
	}

	sock, served = serveAgent(t)
	file := filepath.Join(t.TempDir(), "t.json")
	cmd = exec.Command(bin, "-q", "-x", "oformat=perfetto", "-o", file, "-x", "guest=vm1="+sock, "-n",
		`syscall::getppid:entry, syscall::getppid:return /execname == "guestcalls"/ {}`, "-c", calls+" 100")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if err := <-served; err != nil {
		t.Fatalf("agent: %v", err)
	}
	s, err := perfetto.CheckFile(file)
	if err != nil {
		t.Fatal(err)
	}
	procs := fmt.Sprint(s.Processes)
	// The "guest" sees the process gone by the time it names it (it
	// is no -c target there): "pid N".
	if s.Slices != 200 || s.Tracks != 2 || !regexp.MustCompile(`host: guestcalls.*vm1: (guestcalls|pid \d+)`).MatchString(procs) {
		t.Errorf("%d slices on %d tracks, processes %s", s.Slices, s.Tracks, procs)
	}
	// One machine, one clock: the offset found is 0 within its bound.
	m, _ := s.OtherData["machines"].(map[string]any)
	vm1, _ := m["vm1"].(map[string]any)
	off, _ := vm1["clock_offset_ns"].(float64)
	bound, ok := vm1["clock_error_bound_ns"].(float64)
	if !ok || off > bound || -off > bound {
		t.Errorf("otherData %v", s.OtherData)
	}
}
