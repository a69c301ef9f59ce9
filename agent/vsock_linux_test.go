package agent

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/testutil/guesttest"
	"github.com/dtrace-go/dtrace/output"
)

// TestVsockVM: in a 6.12 guest, with the vsock loopback transport (CID
// 1, for want of a vhost-vsock device under run-kernel), an agent
// serving vsock:PORT refuses a peer that is not the host, and serves a
// host that dials vsock:1:PORT once tests admit the loopback
// (TestVsockInGuest).
func TestVsockVM(t *testing.T) {
	dir := build(t)
	cache := os.Getenv("RUN_KERNEL_CACHE")
	if cache == "" {
		cache = "/var/cache/run-kernel"
	}
	out, err := guesttest.Run(t, "-t", "600", "-m", "1024", fmt.Sprintf("%s=%s %s=vsock RUN_KERNEL_CACHE=%s %s -test.v -test.run '^TestVsockInGuest$'",
		guestEnv, dir, guestMode, cache, filepath.Join(dir, "agent.test")))
	t.Logf("guest:\n%s", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "--- PASS: TestVsockInGuest") {
		t.Fatal("TestVsockInGuest did not pass in the guest")
	}
}

// TestVsockInGuest is TestVsockVM's half in the guest.
func TestVsockInGuest(t *testing.T) {
	dir := os.Getenv(guestEnv)
	if dir == "" || os.Getenv(guestMode) != "vsock" {
		t.Skip("runs in the guest of TestVsockVM")
	}
	loadVsock(t)
	const port = "5123"
	var logw syncBuffer
	served := make(chan error, 1)
	go func() {
		d, err := OpenDevice("vsock:"+port, &logw)
		if err != nil {
			served <- err
			return
		}
		defer d.Close()
		served <- Serve(d, &logw)
	}()
	// A peer that is not the host (here the guest itself, CID 1) is
	// refused: its connection is closed at once.
	var s stream
	var err error
	for try := 0; try < 100; try++ {
		if s, err = dialVsock("1:" + port); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond) // the agent is not listening yet
	}
	if err != nil {
		t.Fatal(err)
	}
	s.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := s.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("a local peer was not refused: read %d, %v", n, err)
	}
	s.Close()
	if want := "dtrace: agent: refused a vsock connection from CID 1: only the host (CID 2) may connect\n"; logw.String() != want {
		t.Errorf("log %q, want %q", logw.String(), want)
	}
	// Admitted, the loopback serves a whole session.
	vsockLocal.Store(true)
	defer vsockLocal.Store(false)
	session(t, func() (*Guest, error) { return Dial("vm1", "vsock:1:"+port, output.Monotonic) }, served, &logw,
		filepath.Join(dir, "gp"))
}

// loadVsock loads the vsock modules of the running kernel from the
// package run-kernel unpacked, unless they are loaded; it skips the test
// when they are not there.
func loadVsock(t *testing.T) {
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Fatal(err)
	}
	kver := strings.TrimSpace(string(rel))
	var mdir string
	for _, lib := range []string{"lib", "usr/lib"} {
		m, _ := filepath.Glob(filepath.Join(os.Getenv("RUN_KERNEL_CACHE"), "*", "root", lib, "modules", kver, "kernel", "net", "vmw_vsock"))
		if len(m) > 0 {
			mdir = m[0]
		}
	}
	for _, mod := range []string{"vsock", "vmw_vsock_virtio_transport_common", "vsock_loopback"} {
		if _, err := os.Stat("/sys/module/" + mod); err == nil {
			continue
		}
		ko, _ := filepath.Glob(filepath.Join(mdir, mod+".ko*"))
		if mdir == "" || len(ko) == 0 {
			t.Skipf("no module %s for kernel %s under %s", mod, kver, os.Getenv("RUN_KERNEL_CACHE"))
		}
		var image []byte
		switch filepath.Ext(ko[0]) {
		case ".xz":
			image, err = exec.Command("xz", "-dc", ko[0]).Output()
		case ".zst":
			image, err = exec.Command("zstd", "-qdc", ko[0]).Output()
		default:
			image, err = os.ReadFile(ko[0])
		}
		if err == nil {
			err = unix.InitModule(image, "")
		}
		if err != nil {
			t.Fatalf("loading %s: %v", ko[0], err)
		}
	}
}
