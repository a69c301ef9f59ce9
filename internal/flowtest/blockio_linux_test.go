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
// 1..5 set at its write shows that flow->req at io:::start (as the bio is
// submitted) and at io:::done (which fires in an interrupt or a worker,
// not in the writer), every bio done with a flow was started with the
// same flow, and no other flow shows. (io:::done passes a request's first
// bio: the bios merged behind it are started and never done. Bios without
// data, the fsync's cache flush, are left out.) The trace goes on until a
// syncfs of the file system returns, so that no request the writes
// started (the journal's, which may still be in flight when fsync
// returns) is cut off between its start and its done.
func TestBlockIO(t *testing.T) {
	const n = 5
	p := build(t, "flowio")[0]
	dir := blockDir(t)
	out := tracetest.Trace(t, 0, `#pragma D option quiet
syscall::write:entry /execname == "flowio"/ { flow->req = ++n; }
io:::start, io:::done /flow->req && ((struct bio *)arg0)->bi_iter.bi_size/ { printf("%s %d %p\n", probename, flow->req, arg0); }
`, run(t, fmt.Sprintf("%s io %d %s && sync -f %s", p, n, dir, dir)))
	// The bios of each flow, by address.
	bios := map[string]map[string]map[string]bool{"start": {}, "done": {}}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || bios[f[0]] == nil {
			t.Fatalf("line %q, want io:::start or done, a flow->req and a bio:\n%s", line, out)
		}
		if bios[f[0]][f[1]] == nil {
			bios[f[0]][f[1]] = map[string]bool{}
		}
		bios[f[0]][f[1]][f[2]] = true
	}
	for k := 1; k <= n; k++ {
		req := fmt.Sprint(k)
		started, done := bios["start"][req], bios["done"][req]
		unstarted := 0
		for b := range done {
			if !started[b] {
				unstarted++
			}
		}
		if len(started) == 0 || len(done) == 0 || unstarted > 0 {
			t.Errorf("flow->req %d: %d bios started, %d done, %d done and not started with it; want some of each, each done started", k, len(started), len(done), unstarted)
		}
		delete(bios["start"], req)
		delete(bios["done"], req)
	}
	if len(bios["start"])+len(bios["done"]) > 0 {
		t.Errorf("I/O with flows nobody set: %v\n%s", bios, out)
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
