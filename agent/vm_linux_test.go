package agent

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/bpfobj"
	"github.com/dtrace-go/dtrace/internal/guesttest"
	"github.com/dtrace-go/dtrace/internal/testprog"
)

// guestEnv selects, in the guest, the guest's half of TestGuestVM.
const guestEnv = "AGENT_GUEST"

// TestGuestVM boots a guest with a virtio-serial port vm1 and runs this
// test binary in it (TestInGuest): the agent serves the port, and a
// process calls getppid 1,234 times, twice. The host dtrace, with -x
// guest=vm1=SOCKET, counts them under vm1 ("vm1  2468"); when it exits,
// the agent detaches everything: the guest's BPF program, map and link
// lists are as before.
func TestGuestVM(t *testing.T) {
	if os.Getenv(guestEnv) != "" {
		t.Skip("inside the guest")
	}
	rk := guesttest.RunKernel(t)
	if os.Geteuid() != 0 {
		t.Skip("run-kernel needs root")
	}
	if testing.Short() {
		t.Skip("boots a guest")
	}
	dir := guesttest.Dir(t, ".agent-guest-")
	dt := testprog.BuildCmd(t, dir, "dtrace")
	testprog.BuildIn(t, dir, "gp", []string{"calls.c"})
	self := guesttest.Self(t, dir, "agent.test")
	sock := filepath.Join(t.TempDir(), "vm1.sock")
	done := filepath.Join(dir, "done")
	guest := exec.Command(rk, "-t", "900", "-m", "1024", "-S", "vm1="+sock,
		fmt.Sprintf("%s=%s %s -test.v -test.run '^TestInGuest$'", guestEnv, dir, self))
	var gout bytes.Buffer
	guest.Stdout, guest.Stderr = &gout, &gout
	start := time.Now()
	if err := guest.Start(); err != nil {
		t.Fatal(err)
	}
	gdone := make(chan error, 1)
	go func() { gdone <- guest.Wait() }()
	defer func() {
		guest.Process.Kill()
		<-gdone
	}()
	for _, err := os.Stat(sock); err != nil; _, err = os.Stat(sock) {
		select {
		case err := <-gdone:
			t.Fatalf("guest ended: %v\n%s", err, gout.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	host := exec.Command(dt, "-q", "-x", "guest=vm1="+sock,
		"-n", `syscall::getppid:entry /execname == "gp"/ { @ = count(); }`)
	var hout, herr bytes.Buffer
	host.Stdout, host.Stderr = &hout, &herr
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	// The guest writes done once its process has run.
	for _, err := os.Stat(done); err != nil; _, err = os.Stat(done) {
		select {
		case err := <-gdone:
			host.Process.Kill()
			t.Fatalf("guest ended: %v\n%s\nhost: %s", err, gout.String(), herr.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	host.Process.Signal(syscall.SIGINT)
	if err := host.Wait(); err != nil {
		t.Fatalf("host dtrace: %v\n%s", err, herr.String())
	}
	err := <-gdone
	gdone <- err
	t.Logf("guest ran %v:\n%s", time.Since(start).Round(time.Second), gout.String())
	t.Logf("host dtrace:\n%s%s", hout.String(), herr.String())
	if err != nil {
		t.Fatalf("guest: %v", err)
	}
	if !regexp.MustCompile(`(?m)^  vm1 +2468$`).MatchString(hout.String()) {
		t.Errorf("no vm1 2468 line in\n%s", hout.String())
	}
	if !strings.Contains(gout.String(), "--- PASS: TestInGuest") {
		t.Error("TestInGuest did not pass in the guest")
	}
}

// TestInGuest is the guest's half of TestGuestVM.
func TestInGuest(t *testing.T) {
	dir := os.Getenv(guestEnv)
	if dir == "" {
		t.Skip("runs in TestGuestVM's guest")
	}
	before, err := bpfobj.Kernel()
	if err != nil {
		t.Fatal(err)
	}
	agent := exec.Command(filepath.Join(dir, "dtrace"), "-x", "agent=/dev/virtio-ports/vm1")
	logr, logw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	agent.Stderr = logw
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	logw.Close()
	lines := bufio.NewScanner(logr)
	for lines.Scan() {
		t.Logf("agent: %s", lines.Text())
		if strings.Contains(lines.Text(), "tracing for host") {
			break
		}
	}
	for i := 0; i < 2; i++ {
		if out, err := exec.Command(filepath.Join(dir, "gp"), "1234").CombinedOutput(); err != nil {
			t.Fatalf("gp: %v\n%s", err, out)
		}
	}
	during, err := bpfobj.Kernel()
	if err != nil {
		t.Fatal(err)
	}
	if len(during.Links) <= len(before.Links) || len(during.Progs) <= len(before.Progs) {
		t.Errorf("tracing shows no programs or links of the agent: %v", during)
	}
	if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		for lines.Scan() {
			t.Logf("agent: %s", lines.Text())
		}
	}()
	errc := make(chan error, 1)
	go func() { errc <- agent.Wait() }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("agent: %v", err)
		}
	case <-time.After(5 * time.Minute):
		agent.Process.Kill()
		t.Fatal("the agent did not end when the host did")
	}
	after, err := bpfobj.Kernel()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("BPF objects before %v, after %v", before, after)
	}
	t.Logf("BPF lists as before: %d programs, %d maps, %d links (%d, %d, %d while tracing)", len(after.Progs),
		len(after.Maps), len(after.Links), len(during.Progs), len(during.Maps), len(during.Links))
}
