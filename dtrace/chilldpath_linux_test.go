//go:build linux

package dtrace

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// runBounded runs h to its end like runOK, but interrupts it after limit
// (and abandons it 10 s later) so that a run whose exit() never fires
// fails the test instead of hanging it.
func runBounded(t *testing.T, h *Handle, limit time.Duration) (string, int) {
	t.Helper()
	sigs := make(chan os.Signal, 2)
	fired := make(chan struct{}, 1)
	first := time.AfterFunc(limit, func() { fired <- struct{}{}; sigs <- os.Interrupt })
	second := time.AfterFunc(limit+10*time.Second, func() { sigs <- os.Interrupt })
	defer first.Stop()
	defer second.Stop()
	var out bytes.Buffer
	status, err := h.Run(&out, RunConfig{Interrupt: sigs})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	select {
	case <-fired:
		t.Fatalf("the run did not end within %v; it printed:\n%s", limit, out.String())
	default:
	}
	return out.String(), status
}

// TestChill: chill(10 ms) on syscall::getppid:entry makes each getppid()
// of this process take at least 10 ms.
func TestChill(t *testing.T) {
	h := openTest(t, Config{})
	h.opts.Destructive = true
	h.opts.Quiet = true
	const n = 5
	pid := os.Getpid()
	startTest(t, h, "chill.d", fmt.Sprintf(`int n;
syscall::getppid:entry /pid == %d/ { chill(10000000); n++; }
syscall::getppid:entry /pid == %d && n == %d/ { printf("%%d chilled\n", n); exit(0); }`, pid, pid, n))
	var took []time.Duration
	for range n {
		t0 := time.Now()
		syscall.Getppid()
		took = append(took, time.Since(t0))
	}
	out, status := runBounded(t, h, 30*time.Second)
	t.Logf("getppid() under chill(10 ms) took %v", took)
	if status != 0 || out != fmt.Sprintf("%d chilled\n\n", n) {
		t.Errorf("status %d, output %q", status, out)
	}
	for i, d := range took {
		if d < 10*time.Millisecond {
			t.Errorf("getppid() #%d took %v, want at least 10ms (all: %v)", i, d, took)
		}
	}
}

// TestChillLimit: a chill past illumos's budget (500 ms per second per
// CPU), or a negative one, is an illegal operation for that firing and
// does not spin; the run goes on to its exit(). This thread is pinned to
// one CPU so that its getppid() calls share that CPU's budget: the first
// chills 100 ms, the second's 450 ms more within the second are refused,
// then -1 and 2^63-1. Without -w, chill() is refused.
func TestChillLimit(t *testing.T) {
	t.Run("budget", func(t *testing.T) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var all, one unix.CPUSet
		if err := unix.SchedGetaffinity(0, &all); err != nil {
			t.Fatal(err)
		}
		for cpu := 0; cpu < 1024; cpu++ {
			if all.IsSet(cpu) {
				one.Set(cpu)
				break
			}
		}
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			t.Fatal(err)
		}
		defer unix.SchedSetaffinity(0, &all)
		var stderr bytes.Buffer
		h := openTest(t, Config{Stderr: &stderr})
		h.opts.Destructive = true
		h.opts.Quiet = true
		pid := os.Getpid()
		startTest(t, h, "chill-limit.d", strings.ReplaceAll(`int n;
syscall::getppid:entry /pid == PID/ { n++; }
syscall::getppid:entry /pid == PID && n == 1/ { chill(100000000); }
syscall::getppid:entry /pid == PID && n == 2/ { chill(450000000); }
syscall::getppid:entry /pid == PID && n == 3/ { chill(-1); }
syscall::getppid:entry /pid == PID && n == 4/ { chill(0x7fffffffffffffff); }
syscall::getppid:entry /pid == PID && n == 4/ { exit(0); }
ERROR { printf("error %d %d\n", arg4, arg5); }`, "PID", fmt.Sprint(pid)))
		var start, took [4]time.Duration
		t0 := time.Now()
		for i := range 4 {
			start[i] = time.Since(t0)
			syscall.Getppid()
			took[i] = time.Since(t0) - start[i]
		}
		out, status := runBounded(t, h, 30*time.Second)
		t.Logf("getppid() calls started at %v and took %v", start, took)
		if start[1] > 900*time.Millisecond {
			t.Skipf("the second getppid() started %v after the first: its chill may fall in a new interval", start[1])
		}
		want := "error 3 0\nerror 3 0\nerror 3 0\n\n"
		if status != 0 || out != want {
			t.Errorf("status %d, output %q, want %q", status, out, want)
		}
		if n := strings.Count(stderr.String(), "illegal operation"); n != 3 {
			t.Errorf("%d illegal operation errors reported, want 3:\n%s", n, stderr.String())
		}
		if took[0] < 100*time.Millisecond {
			t.Errorf("the first getppid() took %v, want at least 100 ms", took[0])
		}
		// A refused chill does not spin (a loaded machine, or a guest,
		// may still keep the thread waiting a while).
		for _, i := range []int{1, 3} {
			if took[i] >= 450*time.Millisecond {
				t.Errorf("getppid() #%d took %v: its refused chill spun?", i+1, took[i])
			}
		}
	})
	t.Run("not-destructive", func(t *testing.T) {
		h := openTest(t, Config{})
		if _, err := h.Compile(Source{Name: "chill.d", Text: `BEGIN { chill(1); exit(0); }`}); err != nil {
			t.Fatal(err)
		}
		err := h.Go()
		if err == nil || err.Error() != "Destructive actions not allowed" {
			t.Fatalf("Go without -w: %v, want Destructive actions not allowed", err)
		}
	})
}

// TestDPath: d_path() of this process's open files is what readlink(2)
// of /proc/self/fd/N says: files on the root file system, in /proc, in
// /dev and /dev/shm, in a tmpfs mounted here and in one mounted inside
// that, an unlinked file (" (deleted)"), and the working directory; a bad
// pointer is an invalid address at it.
func TestDPath(t *testing.T) {
	dir := t.TempDir()
	outer := filepath.Join(dir, "outer")
	inner := filepath.Join(outer, "sub", "inner")
	if err := os.Mkdir(outer, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", outer, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(outer, unix.MNT_DETACH) })
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", inner, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(inner, unix.MNT_DETACH) })
	var files []*os.File
	open := func(name string, flag int) {
		f, err := os.OpenFile(name, flag, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		files = append(files, f)
	}
	open(filepath.Join(dir, "plain"), os.O_CREATE|os.O_RDWR)
	open("/proc/self/status", os.O_RDONLY)
	open("/dev/null", os.O_RDONLY)
	open(filepath.Join(outer, "in-outer"), os.O_CREATE|os.O_RDWR)
	open(filepath.Join(inner, "in-inner"), os.O_CREATE|os.O_RDWR)
	open(filepath.Join(outer, "sub"), os.O_RDONLY)
	open(inner, os.O_RDONLY)
	open("/", os.O_RDONLY)
	if _, err := os.Stat("/dev/shm"); err == nil {
		open("/dev/shm/dtrace-dpath-test", os.O_CREATE|os.O_RDWR)
		os.Remove("/dev/shm/dtrace-dpath-test")
	}
	open(filepath.Join(inner, "gone"), os.O_CREATE|os.O_RDWR)
	os.Remove(filepath.Join(inner, "gone"))
	var src, want strings.Builder
	src.WriteString("BEGIN {\n")
	for _, f := range files {
		fmt.Fprintf(&src, "\tprintf(\"%%s\\n\", d_path(&getf(%d)->f_path));\n", f.Fd())
		l, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		want.WriteString(l + "\n")
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	src.WriteString("\tprintf(\"%s\\n\", d_path(&curthread->fs->pwd));\n\texit(0);\n}\n")
	want.WriteString(wd + "\n\n")
	h := openTest(t, Config{})
	h.opts.Quiet = true
	startTest(t, h, "dpath.d", src.String())
	out, status := runBounded(t, h, 30*time.Second)
	if status != 0 || out != want.String() {
		t.Errorf("status %d, got:\n%s\nwant:\n%s", status, out, want.String())
	}

	t.Run("bad-address", func(t *testing.T) {
		h := openTest(t, Config{})
		h.opts.Quiet = true
		startTest(t, h, "dpath-bad.d", `ERROR { printf("%d %d\n", arg4, arg5); exit(0); }
BEGIN { trace(d_path((struct path *)0x18)); exit(1); }`)
		out, status := runBounded(t, h, 30*time.Second)
		if status != 0 || out != "1 24\n\n" {
			t.Errorf("status %d, output %q, want the fault at 0x18 (invalid address)", status, out)
		}
	})
}
