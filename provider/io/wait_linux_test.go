package io_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/testutil/guesttest"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/provider/ktrace/ktracetest"
)

// waitGuestEnv marks a run of TestWaitDirectRead in a guest.
const waitGuestEnv = "IO_WAIT_GUEST"

// directDir returns a directory on a block device and the device's name
// as devinfo_t's dev_statname gives it: an ext4 made on a loop device,
// or the test's temporary directory where no loop device can be had. A
// loop device's I/O is done by its worker thread, so a reader always
// waits for it; a fast virtual disk (a host's page cache behind virtio)
// can complete a read before its reader goes to sleep, and then there is
// no wait to see.
func directDir(t *testing.T) (string, string) {
	dir := t.TempDir()
	img := filepath.Join(dir, "fs.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 32<<20); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).CombinedOutput()
	if err != nil {
		var st unix.Stat_t
		if err := unix.Stat(dir, &st); err == nil && unix.Major(st.Dev) != 0 {
			if name, err := os.Readlink(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))); err == nil {
				t.Logf("no loop device (%v %s): reading %s", err, out, filepath.Base(name))
				return dir, filepath.Base(name)
			}
		}
		t.Skipf("no loop device can be had and %s is on no block device: %v %s", dir, err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", dev).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v %s", err, out)
	}
	mnt := filepath.Join(dir, "mnt")
	os.Mkdir(mnt, 0o755)
	if out, err := exec.Command("mount", "-t", "ext4", dev, mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	return mnt, filepath.Base(dev)
}

// TestWaitDirectRead: a synchronous O_DIRECT read of a 4096-byte block
// waits for its I/O: io:::wait-start and then io:::wait-done fire in the
// reading thread for a 4096-byte read of the file's device; io:::start
// and io:::done fire for each read's bio.
func TestWaitDirectRead(t *testing.T) {
	if os.Getenv(waitGuestEnv) != "" {
		// The guest has no modules: load loop and ext4 from its package.
		script := filepath.Join(guesttest.Root(), "internal", "flowtest", "testdata", "guestmods.sh")
		if out, err := exec.Command("sh", script).CombinedOutput(); err != nil {
			t.Logf("guestmods.sh: %v %s", err, out)
		}
	}
	ktracetest.Dtrace(t)
	dir, dev := directDir(t)
	name := filepath.Join(dir, "wait.dat")
	const n = 8
	if err := os.WriteFile(name, make([]byte, n*4096), 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		t.Skipf("O_DIRECT: %v", err)
	}
	defer unix.Close(fd)
	mem := make([]byte, 2*4096)
	buf := mem[(4096-int(uintptr(unsafe.Pointer(&mem[0]))%4096))%4096:][:4096]
	// The reads run in this goroutine: keep it on one thread, whose id
	// the program looks for.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	out := ktracetest.Run(t, fmt.Sprintf(`
io:::wait-start /tid == %[1]d && args[0]->b_bcount == 4096 && (args[0]->b_flags & B_READ) && args[1]->dev_statname == "%[2]s"/ {
	self->waiting = 1; @["start"] = count();
}
io:::wait-done /tid == %[1]d && self->waiting && args[0]->b_bcount == 4096 && args[1]->dev_statname == "%[2]s"/ {
	self->waiting = 0; @["done"] = count();
}
io:::start, io:::done, io:::wait-start /args[0]->b_bcount == 4096 && (args[0]->b_flags & B_READ) && args[1]->dev_statname == "%[2]s"/ {
	@[strjoin("io-", probename)] = count();
}
ERROR { @["errors"] = count(); }
`, tid, dev)+"END { printa(\"%s %@d\\n\", @); }", 3*time.Second, func() {
		for i := 0; i < n; i++ {
			if _, err := unix.Pread(fd, buf, int64(i)*4096); err != nil {
				t.Error(err)
			}
		}
	})
	t.Logf("device %s:\n%s", dev, out)
	var start, done int
	if m := regexp.MustCompile(`(?m)^start (\d+)$`).FindStringSubmatch(out); m != nil {
		start, _ = strconv.Atoi(m[1])
	}
	if m := regexp.MustCompile(`(?m)^done (\d+)$`).FindStringSubmatch(out); m != nil {
		done, _ = strconv.Atoi(m[1])
	}
	// A read whose I/O completes before its thread goes to sleep does
	// not wait (seen once in 8 on a loop device in the 6.1 guest); most
	// do, and every wait ends.
	if start < n/2 || done != start {
		t.Errorf("%d reads: wait-start %d, wait-done %d after it; want at least %d, each followed by wait-done", n, start, done, n/2)
	}
	// Each read is also an io:::start and an io:::done of its bio, in a
	// clause that names a wait probe too, without a fault.
	for _, p := range []string{"io-start", "io-done"} {
		c := 0
		if m := regexp.MustCompile(`(?m)^` + p + ` (\d+)$`).FindStringSubmatch(out); m != nil {
			c, _ = strconv.Atoi(m[1])
		}
		if c < n {
			t.Errorf("%d reads: %d %s, want at least %d", n, c, p, n)
		}
	}
	if strings.Contains(out, "errors ") {
		t.Errorf("faults in the io clauses:\n%s", out)
	}
}

// TestWaitGuests runs TestWaitDirectRead in Debian's 6.12 and 6.1 kernels.
func TestWaitGuests(t *testing.T) {
	dir := guesttest.Host(t, waitGuestEnv, ".guest-io-")
	env := []string{waitGuestEnv + "=1", ktracetest.BinaryEnv + "=" + testprog.BuildCmd(t, dir, "dtrace")}
	guesttest.RunTests(t, dir, env, "TestWaitDirectRead", "-t", "900")
}
