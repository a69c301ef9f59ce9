//go:build linux

package usdt_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/dtrace"
	"github.com/dtrace-go/dtrace/internal/testprog"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/usdt"
	"github.com/dtrace-go/dtrace/symbol"
)

// named presents the provider under one provider name (myprov1234), which
// the Registry compares literally with a description's provider field.
type named struct {
	provider.Provider
	name string
}

func (n named) Name() string { return n.name }

type started struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   bytes.Buffer
}

// start runs a test program, which blocks on its first read of stdin.
func start(t *testing.T, path string, args ...string) *started {
	t.Helper()
	s := &started{cmd: exec.Command(path, args...)}
	s.cmd.Stdout = &s.out
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait() })
	deadline := time.Now().Add(5 * time.Second)
	for {
		p, err := symbol.ReadProcess(s.cmd.Process.Pid)
		if err == nil && p.Exe == path {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *started) release(t *testing.T) {
	t.Helper()
	s.stdin.Write([]byte{'\n'})
	s.stdin.Close()
	if err := s.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

// trace compiles src with the given providers, calls run while tracing
// and returns the output lines, sorted.
func trace(t *testing.T, target int, src string, run func(), provs ...provider.Provider) []string {
	t.Helper()
	h, err := dtrace.Open(dtrace.NewOptions(), dtrace.Config{Target: target})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, p := range provs {
		h.Registry().Add(p)
	}
	if _, err := h.Compile(dtrace.Source{Name: "test", Text: src}); err != nil {
		t.Fatal(err)
	}
	if err := h.Go(); err != nil {
		t.Fatal(err)
	}
	run()
	var out bytes.Buffer
	if _, err := h.Work(&out); err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		done, err := h.Work(&out)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
	}
	if err := h.PrintAggregations(&out); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(out.String(), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	return lines
}

const script = `
#pragma D option quiet
myprov$target:::myprobe { printf("myprobe %d %d\n", arg0, arg1); }
myprov$target:::big-probe { printf("big %d %d %s\n", arg0, arg1, copyinstr(arg2)); }
myprov$target:::guarded { printf("guarded %d\n", arg0); }
myprov$target:::global { printf("global %d %d\n", arg0, arg1); }
`

func expected(n int, probes ...string) []string {
	var want []string
	total := 0
	for i := 0; i < n; i++ {
		total += i
		for _, p := range probes {
			switch p {
			case "myprobe":
				want = append(want, fmt.Sprintf("myprobe %d %d", i, -i))
			case "big":
				want = append(want, fmt.Sprintf("big %d %d hello", int64(i)*1e9, i))
			case "guarded":
				want = append(want, fmt.Sprintf("guarded %d", i))
			case "global":
				want = append(want, fmt.Sprintf("global %d %d", total, n))
			}
		}
	}
	sort.Strings(want)
	return want
}

// TestProcessProbes traces the probes of one process, built with and
// without optimization so that arguments live in registers (-4@%eax, a
// high byte, a global: -4@limit(%rip)) and in memory (-4@-8(%rbp)).
func TestProcessProbes(t *testing.T) {
	const n = 20
	for _, opt := range []string{"-O0", "-O2", "-O2 -fPIE -pie"} {
		t.Run(opt, func(t *testing.T) {
			prog := testprog.BuildUSDT(t, strings.Fields(opt)...)
			p := start(t, prog, strconv.Itoa(n))
			pv := named{usdt.New(nil), "myprov" + strconv.Itoa(p.cmd.Process.Pid)}
			got := trace(t, p.cmd.Process.Pid, script, func() { p.release(t) }, pv)
			want := expected(n, "myprobe", "big", "guarded", "global")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// The program fires the guarded probe only while the semaphore
			// is up.
			if s := strings.TrimSpace(p.out.String()); s != strconv.Itoa(n) {
				t.Errorf("program saw the semaphore set %s times, want %d", s, n)
			}
		})
	}
}

// TestByPath traces probes without a process id: they fire in a process
// that was running when tracing started and in one started later, and
// the semaphore is raised in both.
func TestByPath(t *testing.T) {
	const n = 7
	prog := testprog.BuildUSDT(t, "-O2")
	first := start(t, prog, strconv.Itoa(n))
	pv := named{usdt.New(nil, prog), "myprov"}
	var second *started
	got := trace(t, 0, `#pragma D option quiet
myprov:::guarded { printf("guarded %d\n", arg0); }`, func() {
		second = start(t, prog, strconv.Itoa(n))
		first.release(t)
		second.release(t)
	}, pv)
	want := append(expected(n, "guarded"), expected(n, "guarded")...)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, s := range []*started{first, second} {
		if out := strings.TrimSpace(s.out.String()); out != strconv.Itoa(n) {
			t.Errorf("process %d saw the semaphore set %s times, want %d", i, out, n)
		}
	}
}

// startStopped starts a program held by ptrace right after exec, before
// the dynamic linker has mapped any library, as dtrace -c does. detach
// lets it run.
func startStopped(t *testing.T, path string, args ...string) (s *started, detach func()) {
	t.Helper()
	s = &started{cmd: exec.Command(path, args...)}
	s.cmd.Stdout = &s.out
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	startErr := make(chan error)
	release := make(chan struct{})
	go func() {
		// ptrace requests must come from the thread that started the child.
		runtime.LockOSThread()
		if err := s.cmd.Start(); err != nil {
			startErr <- err
			return
		}
		var ws unix.WaitStatus
		if _, err := unix.Wait4(s.cmd.Process.Pid, &ws, unix.WALL, nil); err != nil || !ws.Stopped() {
			startErr <- fmt.Errorf("no stop after exec: %v", err)
			return
		}
		startErr <- nil
		<-release
		unix.PtraceDetach(s.cmd.Process.Pid)
	}()
	if err := <-startErr; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.cmd.Process.Kill() })
	return s, func() { close(release) }
}

// TestLibraryBeforeLoad traces libstdc++'s probes in a process that has
// not loaded libstdc++ yet.
func TestLibraryBeforeLoad(t *testing.T) {
	const n = 9
	prog := testprog.BuildThrow(t, "-O2")
	p, detach := startStopped(t, prog, strconv.Itoa(n))
	pv := named{usdt.New(nil), "libstdcxx" + strconv.Itoa(p.cmd.Process.Pid)}
	got := trace(t, p.cmd.Process.Pid, `#pragma D option quiet
libstdcxx$target:::throw { printf("throw\n"); }
libstdcxx$target:::catch { printf("catch\n"); }`, func() {
		detach()
		p.release(t)
	}, pv)
	var want []string
	for i := 0; i < n; i++ {
		want = append(want, "catch", "throw")
	}
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// semaphore reads the guarded probe's semaphore in the process's memory.
func semaphore(t *testing.T, pid int) uint16 {
	t.Helper()
	proc, err := symbol.ReadProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, mod := range proc.Modules() {
		if !mod.IsExe {
			continue
		}
		obj, err := symbol.LoadObject(proc.OpenPath(mod))
		if err != nil {
			t.Fatal(err)
		}
		bias, _ := proc.Bias(mod, obj)
		v, ok := obj.SymbolValue("myprov_guarded_semaphore")
		if !ok {
			t.Fatal("no semaphore symbol")
		}
		f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var b [2]byte
		if _, err := f.ReadAt(b[:], int64(v+bias)); err != nil {
			t.Fatal(err)
		}
		return uint16(b[0]) | uint16(b[1])<<8
	}
	t.Fatal("no executable")
	return 0
}

// TestSemaphore: the kernel raises the semaphore while tracing and lowers
// it when tracing ends, after which the program no longer fires the
// guarded probe.
func TestSemaphore(t *testing.T) {
	prog := testprog.BuildUSDT(t, "-O2")
	for _, byPath := range []bool{false, true} {
		p := start(t, prog, "5")
		pid := p.cmd.Process.Pid
		pv := named{usdt.New(nil), "myprov" + strconv.Itoa(pid)}
		src := "myprov$target:::guarded { @ = count(); }"
		if byPath {
			pv = named{usdt.New(nil, prog), "myprov"}
			src = "myprov:::guarded { @ = count(); }"
		}
		if v := semaphore(t, pid); v != 0 {
			t.Fatalf("semaphore %d before tracing", v)
		}
		trace(t, pid, src, func() {
			if v := semaphore(t, pid); v != 1 {
				t.Errorf("by path %v: semaphore %d while tracing, want 1", byPath, v)
			}
		}, pv)
		if v := semaphore(t, pid); v != 0 {
			t.Errorf("by path %v: semaphore %d after tracing, want 0", byPath, v)
		}
		p.release(t)
		if s := strings.TrimSpace(p.out.String()); s != "0" {
			t.Errorf("by path %v: the program saw the semaphore set %s times after tracing ended", byPath, s)
		}
	}
}

// TestProbeNames lists the probes of a process and of its file.
func TestProbeNames(t *testing.T) {
	prog := testprog.BuildUSDT(t, "-O2")
	p := start(t, prog, "1")
	pidStr := strconv.Itoa(p.cmd.Process.Pid)
	pv := usdt.New(nil, prog)
	for _, tc := range []struct {
		desc provider.Desc
		want []string
	}{
		{provider.Desc{Provider: "myprov" + pidStr}, []string{
			"myprov" + pidStr + ":usdt:main:myprobe", "myprov" + pidStr + ":usdt:main:big-probe",
			"myprov" + pidStr + ":usdt:main:global", "myprov" + pidStr + ":usdt:guarded:guarded"}},
		{provider.Desc{Provider: "myprov" + pidStr, Module: "a.out", Name: "*-*"}, []string{"myprov" + pidStr + ":usdt:main:big-probe"}},
		{provider.Desc{Provider: "myprov" + pidStr, Module: "libc.so.6"}, nil},
		{provider.Desc{Provider: "my*", Function: "guarded"}, []string{"myprov:usdt:guarded:guarded"}},
		{provider.Desc{Provider: "otherprov" + pidStr}, nil},
	} {
		probes, err := pv.Probes(tc.desc)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, pr := range probes {
			got = append(got, pr.String())
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: got %q, want %q", tc.desc, got, tc.want)
		}
	}
	for pattern, want := range map[string]bool{
		"myprov" + pidStr: true, "my*": true, "myprov": true, "syscall": false, "pid" + pidStr: false,
	} {
		if got := pv.Claims(pattern); got != want {
			t.Errorf("Claims(%q) = %v", pattern, got)
		}
	}
}
