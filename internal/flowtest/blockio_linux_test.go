package flowtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/testutil/tracetest"
)

// A request's file write followed by fsync carries the flow of the write
// to its block I/O: each of 5 files written and fsynced with flow->req
// 1..5 set at its write shows that flow->req at io:::start and at
// io:::done (which fires in an interrupt or a worker, not in the
// writer), every request of data started is done with the same flow, and
// no other flow shows. (The fsync's cache flush, which has no data,
// completes with its flow too, without an io:::start of its own. The
// request's byte count is read from struct request, not args[0]->b_bcount:
// 6.1 has no bufinfo_t translator.) The trace goes on until a syncfs of
// the file system returns, so that no request the writes started (the
// journal's, which may still be in flight when fsync returns) is cut off
// between its start and its done.
func TestBlockIO(t *testing.T) {
	const n = 5
	p := build(t, "flowio")[0]
	dir := blockDir(t)
	out := tracetest.Trace(t, 0, `#pragma D option quiet
syscall::write:entry /execname == "flowio"/ { flow->req = ++n; }
io:::start, io:::done /flow->req && ((struct request *)arg0)->__data_len/ { printf("%s %d %p\n", probename, flow->req, arg0); }
`, run(t, fmt.Sprintf("%s io %d %s && sync -f %s", p, n, dir, dir)))
	// The requests of each flow, by address: a request the driver
	// requeues (a full virtio queue under load) is issued, and starts,
	// again, but is done once.
	reqs := map[string]map[string]map[string]bool{"start": {}, "done": {}}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || reqs[f[0]] == nil {
			t.Fatalf("line %q, want io:::start or done, a flow->req and a request:\n%s", line, out)
		}
		if reqs[f[0]][f[1]] == nil {
			reqs[f[0]][f[1]] = map[string]bool{}
		}
		reqs[f[0]][f[1]][f[2]] = true
	}
	for k := 1; k <= n; k++ {
		req := fmt.Sprint(k)
		started, done := reqs["start"][req], reqs["done"][req]
		missing := 0
		for r := range started {
			if !done[r] {
				missing++
			}
		}
		if len(started) == 0 || missing > 0 || len(done) != len(started) {
			t.Errorf("flow->req %d: %d requests started, %d done, %d started and not done; want each started request done, at least one", k, len(started), len(done), missing)
		}
		delete(reqs["start"], req)
		delete(reqs["done"], req)
	}
	if len(reqs["start"])+len(reqs["done"]) > 0 {
		t.Errorf("I/O with flows nobody set: %v\n%s", reqs, out)
	}
}

// blockDir returns a directory on a file system whose device issues
// requests (a blk-mq block device, so that io:::start and io:::done fire
// for its I/O): the test's temporary directory when it is on one, else
// the root of an ext4 made on a loop device (the guests' /tmp is a
// tmpfs). It skips the test only when neither can be had.
func blockDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	sys := fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	for _, mq := range []string{filepath.Join(sys, "mq"), filepath.Join(sys, "..", "mq")} {
		if _, err := os.Stat(mq); err == nil {
			return dir
		}
	}
	img := filepath.Join(dir, "fs.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 64<<20); err != nil {
		t.Fatal(err)
	}
	out, err := command("losetup", "--find", "--show", img)
	if err != nil {
		t.Skipf("%s is on no block device that issues requests (%s), and no loop device (a run-kernel guest has none without testdata/guestmods.sh): losetup: %v %s", dir, sys, err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := command("losetup", "-d", dev); err != nil {
			t.Errorf("losetup -d %s: %v %s", dev, err, out)
		}
	})
	if out, err := command("mkfs.ext4", "-q", "-F", dev); err != nil {
		t.Fatalf("mkfs.ext4 %s: %v %s", dev, err, out)
	}
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := command("mount", "-t", "ext4", dev, mnt); err != nil {
		t.Fatalf("mount %s: %v %s", dev, err, out)
	}
	t.Cleanup(func() {
		if out, err := command("umount", mnt); err != nil {
			t.Errorf("umount %s: %v %s", mnt, err, out)
		}
	})
	return mnt
}
