//go:build linux

package usdt_test

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/internal/testutil/tracetest"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/usdt"
)

// trace runs src as tracetest.Trace does and returns the output's
// non-empty lines, sorted.
func trace(t *testing.T, target int, src string, run func(), provs ...provider.Provider) []string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(tracetest.Trace(t, target, src, run, provs...), "\n") {
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
			p := testprog.Start(t, prog, strconv.Itoa(n))
			pv := tracetest.Named(usdt.New(nil), "myprov"+strconv.Itoa(p.Pid()))
			got := trace(t, p.Pid(), script, func() { p.Release(t) }, pv)
			want := expected(n, "myprobe", "big", "guarded", "global")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// The program fires the guarded probe only while the semaphore
			// is up.
			if s := strings.TrimSpace(p.Out.String()); s != strconv.Itoa(n) {
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
	first := testprog.Start(t, prog, strconv.Itoa(n))
	pv := tracetest.Named(usdt.New(nil, prog), "myprov")
	var second *testprog.Process
	got := trace(t, 0, `#pragma D option quiet
myprov:::guarded { printf("guarded %d\n", arg0); }`, func() {
		second = testprog.Start(t, prog, strconv.Itoa(n))
		first.Release(t)
		second.Release(t)
	}, pv)
	want := append(expected(n, "guarded"), expected(n, "guarded")...)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, s := range []*testprog.Process{first, second} {
		if out := strings.TrimSpace(s.Out.String()); out != strconv.Itoa(n) {
			t.Errorf("process %d saw the semaphore set %s times, want %d", i, out, n)
		}
	}
}

// TestLibraryBeforeLoad traces libstdc++'s probes in a process that has
// not loaded libstdc++ yet.
func TestLibraryBeforeLoad(t *testing.T) {
	const n = 9
	prog := testprog.BuildThrow(t, "-O2")
	p, detach := testprog.StartStopped(t, prog, strconv.Itoa(n))
	pv := tracetest.Named(usdt.New(nil), "libstdcxx"+strconv.Itoa(p.Pid()))
	got := trace(t, p.Pid(), `#pragma D option quiet
libstdcxx$target:::throw { printf("throw\n"); }
libstdcxx$target:::catch { printf("catch\n"); }`, func() {
		detach()
		p.Release(t)
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
	return testprog.Peek(t, pid, testprog.SemaphoreAddr(t, pid))
}

// TestSemaphore: the kernel raises the semaphore while tracing and lowers
// it when tracing ends, after which the program no longer fires the
// guarded probe.
func TestSemaphore(t *testing.T) {
	prog := testprog.BuildUSDT(t, "-O2")
	for _, byPath := range []bool{false, true} {
		p := testprog.Start(t, prog, "5")
		pid := p.Pid()
		pv := tracetest.Named(usdt.New(nil), "myprov"+strconv.Itoa(pid))
		src := "myprov$target:::guarded { @ = count(); }"
		if byPath {
			pv = tracetest.Named(usdt.New(nil, prog), "myprov")
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
		p.Release(t)
		if s := strings.TrimSpace(p.Out.String()); s != "0" {
			t.Errorf("by path %v: the program saw the semaphore set %s times after tracing ended", byPath, s)
		}
	}
}

// TestProbeNames lists the probes of a process and of its file.
func TestProbeNames(t *testing.T) {
	prog := testprog.BuildUSDT(t, "-O2")
	p := testprog.Start(t, prog, "1")
	pidStr := strconv.Itoa(p.Pid())
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
		got := provider.Names(probes)
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

// TestTargetNames: with a target (-c, -p), a description whose provider
// field is empty or a glob names the target's providers with its pid, as
// dtrace lists a grabbed process's USDT probes (dtrace -p PID -lf main),
// and the probes still fire (through the handle's own provider, which
// takes Config.Target).
func TestTargetNames(t *testing.T) {
	const n = 5
	prog := testprog.BuildUSDT(t, "-O2")
	p := testprog.Start(t, prog, strconv.Itoa(n))
	want := "myprov" + strconv.Itoa(p.Pid())
	pv := usdt.New(nil)
	if ps, _ := pv.Probes(provider.Desc{Name: "myprobe"}); len(ps) != 0 {
		t.Errorf("without a target, :::myprobe made %d probes, want none", len(ps))
	}
	pv.SetTarget(p.Pid())
	for _, d := range []provider.Desc{{Name: "myprobe"}, {Provider: "myp*", Name: "myprobe"}} {
		if !pv.Claims(d.Provider) {
			t.Errorf("%q not claimed", d.Provider)
		}
		ps, err := pv.Probes(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 1 || ps[0].Provider != want || ps[0].Name != "myprobe" {
			t.Errorf("%+v made %v, want one %s probe", d, ps, want)
		}
	}
	got := trace(t, p.Pid(), `#pragma D option quiet
myp*:::myprobe { printf("myprobe %d %d\n", arg0, arg1); }`, func() { p.Release(t) })
	if w := expected(n, "myprobe"); strings.Join(got, "\n") != strings.Join(w, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(w, "\n"))
	}
}
