//go:build linux

package pid_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/dtrace"
	"github.com/dtrace-go/dtrace/internal/testprog"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/pid"
	"github.com/dtrace-go/dtrace/symbol"
)

// named presents a provider under the name of one process's provider
// (pid1234), which the Registry compares literally with a description.
type named struct {
	provider.Provider
	name string
}

func (n named) Name() string { return n.name }

// started is a test program blocked on its first read of stdin.
type started struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   bytes.Buffer
}

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
	// The process must have exec'd the program (not still be the forked
	// Go child) when its mappings are read.
	deadline := time.Now().Add(5 * time.Second)
	for {
		p, err := symbol.ReadProcess(s.cmd.Process.Pid)
		if err == nil && p.Exe == path {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return s
}

// release lets the program run and waits for it to exit.
func (s *started) release(t *testing.T) {
	t.Helper()
	s.stdin.Write([]byte{'\n'})
	s.stdin.Close()
	if err := s.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

// trace compiles src with extra providers, runs it while run() runs, then
// stops and returns the output.
func trace(t *testing.T, target int, src string, run func(), provs ...provider.Provider) string {
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
	// Work before Stop: the library writes records drained by Stop to the
	// writer Work was given.
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
	return out.String()
}

// aggValue returns the single value a keyless aggregation printed.
func aggValue(t *testing.T, out string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	return v
}

func TestEntryCountAndReturnSum(t *testing.T) {
	prog := testprog.BuildWork(t, "-O2")
	const n = 1000
	for _, tc := range []struct {
		clause string
		want   int64
	}{
		{"pid$target:work:work:entry { @ = count(); }", n},
		{"pid$target:work:work:return { @ = sum(arg1); }", testprog.Sum(n)},
		{"pid$target::work:entry { @ = sum(arg0); }", int64(n * (n - 1) / 2)},
		{"pid$target:work:w*k:return /arg0 == 0/ { @ = count(); }", n},
		// The ret of work (at 4 with -O2), with the argument still in rdi.
		{"pid$target:work:work:4 { @ = sum(arg0); }", int64(n * (n - 1) / 2)},
	} {
		t.Run(tc.clause, func(t *testing.T) {
			p := start(t, prog, strconv.Itoa(n))
			pv := named{pid.New(symbol.NewSymbolizer()), "pid" + strconv.Itoa(p.cmd.Process.Pid)}
			out := trace(t, p.cmd.Process.Pid, tc.clause, func() { p.release(t) }, pv)
			if got := aggValue(t, out); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
			if got := strings.TrimSpace(p.out.String()); got != strconv.FormatInt(testprog.Sum(n), 10) {
				t.Errorf("program printed %q", got)
			}
		})
	}
}

// TestPerfEvents runs the counting test on uprobe perf events, which
// kernels older than 6.6 (without uprobe_multi links) use.
func TestPerfEvents(t *testing.T) {
	if !pid.Multi() {
		t.Skip("perf events are the default on this kernel: the other tests use them")
	}
	defer pid.SetMulti(pid.SetMulti(false))
	TestEntryCountAndReturnSum(t)
}

func TestTenArgs(t *testing.T) {
	prog := testprog.BuildWork(t, "-O2")
	p := start(t, prog, "3")
	pv := named{pid.New(nil), "pid" + strconv.Itoa(p.cmd.Process.Pid)}
	out := trace(t, p.cmd.Process.Pid,
		`pid$target:work:args10:entry { printf("%d %d %d %d %d %d %d %d %d %d", arg0, arg1, arg2, arg3, arg4, arg5, arg6, arg7, arg8, arg9); }`,
		func() { p.release(t) }, pv)
	if !strings.Contains(out, "0 1 2 3 4 5 6 7 8 9") {
		t.Errorf("output %q lacks the arguments 0..9", out)
	}
}

// TestProbes asks the provider directly, as the Registry does once it
// lets the provider resolve module aliases (a.out, libc).
func TestProbes(t *testing.T) {
	prog := testprog.BuildWork(t, "-O2")
	p := start(t, prog, "1")
	pidStr := strconv.Itoa(p.cmd.Process.Pid)
	pv := pid.New(nil)
	for _, tc := range []struct {
		desc provider.Desc
		want []string
	}{
		// work is "lea 0x1(%rdi,%rdi,2),%eax; ret": instructions at 0 and 4.
		{provider.Desc{Provider: "pid" + pidStr, Module: "a.out", Function: "work"},
			[]string{"pid" + pidStr + ":work:work:entry", "pid" + pidStr + ":work:work:return",
				"pid" + pidStr + ":work:work:0", "pid" + pidStr + ":work:work:4"}},
		{provider.Desc{Provider: "pid" + pidStr, Module: "a.out", Function: "work", Name: "[0-9]"},
			[]string{"pid" + pidStr + ":work:work:0", "pid" + pidStr + ":work:work:4"}},
		{provider.Desc{Provider: "pid" + pidStr, Module: "a.out", Function: "work", Name: "4"},
			[]string{"pid" + pidStr + ":work:work:4"}},
		{provider.Desc{Provider: "pid" + pidStr, Module: "libc", Function: "mallo?", Name: "entry"},
			[]string{"pid" + pidStr + ":libc.so.6:malloc:entry"}},
		{provider.Desc{Provider: "pid" + pidStr, Module: "libc.so.6", Function: "malloc", Name: "return"},
			[]string{"pid" + pidStr + ":libc.so.6:malloc:return"}},
		{provider.Desc{Provider: "pid*", Function: "work"}, nil},
	} {
		probes, err := pv.Probes(tc.desc)
		if err != nil {
			t.Errorf("%s: %v", tc.desc, err)
			continue
		}
		var got []string
		for _, pr := range probes {
			got = append(got, pr.String())
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: got %q, want %q", tc.desc, got, tc.want)
		}
	}
	for _, tc := range []struct {
		desc     provider.Desc
		tag, msg string
	}{
		{provider.Desc{Function: "work", Name: "bogus"}, "D_PROC_NAME", "'bogus' is an invalid probe name"},
		{provider.Desc{Function: "work", Name: "1"}, "D_PROC_CREATEFAIL", "failed to create probe at 'work+0x1': not an instruction boundary"},
		{provider.Desc{Function: "work", Name: "100000"}, "D_PROC_OFF", "offset 0x100000 outside of function 'work'"},
		{provider.Desc{Module: "a.out", Function: "ahl_r00lz", Name: "entry"}, "D_PROC_FUNC", "failed to lookup 'ahl_r00lz' in module 'a.out'"},
		{provider.Desc{Module: "libc", Function: "-", Name: "800"}, "D_PROC_LIB", "only the a.out module is valid with the '-' function"},
		{provider.Desc{Function: "-", Name: "10*"}, "D_PROC_NAME", "only individual addresses may be specified with the '-' function"},
		{provider.Desc{Provider: "pid0"}, "D_PROC_BADPID", "pid0 does not contain a valid pid"},
		{provider.Desc{Provider: "pid4194303"}, "D_PROC_GRAB", "failed to grab process 4194303"},
	} {
		if tc.desc.Provider == "" {
			tc.desc.Provider = "pid" + pidStr
		}
		_, err := pv.Probes(tc.desc)
		var perr *pid.Error
		if !errors.As(err, &perr) || perr.Tag != tc.tag || perr.Msg != tc.msg {
			t.Errorf("%s: error %v, want [%s] %s", tc.desc, err, tc.tag, tc.msg)
		}
	}
	// An absolute address: work's own, as pid$target::-:ADDR names it.
	proc, err := symbol.ReadProcess(p.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	var addr uint64
	for _, mod := range proc.Modules() {
		if mod.IsExe {
			obj, _ := symbol.LoadObject(proc.OpenPath(mod))
			bias, _ := proc.Bias(mod, obj)
			v, _ := obj.SymbolValue("work")
			addr = v + bias
		}
	}
	name := strconv.FormatUint(addr, 16)
	probes, err := pv.Probes(provider.Desc{Provider: "pid" + pidStr, Function: "-", Name: name})
	if err != nil || len(probes) != 1 || probes[0].String() != "pid"+pidStr+":work:-:"+name {
		t.Errorf("pid%s::-:%s: %v %v", pidStr, name, probes, err)
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

// TestLibraryBeforeLoad probes a libc function of a process that has not
// loaded libc yet.
func TestLibraryBeforeLoad(t *testing.T) {
	prog := testprog.BuildWork(t, "-O0")
	p, detach := startStopped(t, prog, "5")
	if proc, err := symbol.ReadProcess(p.cmd.Process.Pid); err != nil {
		t.Fatal(err)
	} else {
		for _, m := range proc.Modules() {
			if m.Name == "libc.so.6" {
				t.Fatal("libc is mapped already: the test tests nothing")
			}
		}
	}
	pv := named{pid.New(nil), "pid" + strconv.Itoa(p.cmd.Process.Pid)}
	out := trace(t, p.cmd.Process.Pid, "pid$target:libc.so.6:atoi:entry { @ = count(); }", func() {
		detach()
		p.release(t)
	}, pv)
	if got := aggValue(t, out); got != 1 {
		t.Errorf("atoi called %d times, want 1", got)
	}
}
