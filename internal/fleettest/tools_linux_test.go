package fleettest

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/lockedbuf"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// here is this package's directory.
func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

var toolMu sync.Mutex

// tool builds the program of the module in directory dir (collector,
// jaeger) once for its go.mod, go.sum and sources, into the user's cache
// directory, and returns its path. pkg is the package to build.
func tool(t *testing.T, dir, pkg string) string {
	t.Helper()
	toolMu.Lock()
	defer toolMu.Unlock()
	src := filepath.Join(here(), dir)
	files, _ := filepath.Glob(filepath.Join(src, "*.go"))
	h := sha256.New()
	for _, f := range append([]string{filepath.Join(src, "go.mod"), filepath.Join(src, "go.sum")}, files...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	sum := h.Sum(nil)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	out := filepath.Join(cache, "dtrace-fleettest", fmt.Sprintf("%s-%x", dir, sum)[:len(dir)+17], dir)
	if _, err := os.Stat(out); err == nil {
		return out
	}
	start := time.Now()
	cmd := exec.Command("go", "build", "-o", out+".tmp", pkg)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", dir, err, b)
	}
	if err := os.Rename(out+".tmp", out); err != nil {
		t.Fatal(err)
	}
	t.Logf("built %s in %v", dir, time.Since(start).Round(time.Second))
	return out
}

// build skips the test unless it runs as root (tracing needs it) and
// builds dtrace into the test's directory; it returns both.
func build(t *testing.T) (dir, dtrace string) {
	t.Helper()
	testprog.NeedRoot(t, "BPF")
	dir = t.TempDir()
	return dir, testprog.BuildCmd(t, dir, "dtrace")
}

// server is a receiver process the test started.
type server struct {
	cmd *exec.Cmd
	log lockedbuf.Buffer
}

// startServer starts a program with args and waits until it listens on
// addr; the test stops it when it ends (if it has not stopped before).
func startServer(t *testing.T, addr string, name string, args ...string) *server {
	t.Helper()
	s := &server{cmd: exec.Command(name, args...)}
	s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	for end := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return s
		}
		if time.Now().After(end) || s.cmd.ProcessState != nil {
			t.Fatalf("%s does not listen on %s:\n%s", filepath.Base(name), addr, s.log.String())
		}
	}
}

// stop kills the server (its process group) and waits for it.
func (s *server) stop() {
	if s.cmd.Process == nil || s.cmd.ProcessState != nil {
		return
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	s.cmd.Wait()
}

// lines reads a file's lines.
func lines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out
}
