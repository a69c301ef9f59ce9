//go:build linux

package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// dlopenLib is a library with a function and a USDT probe in it.
const dlopenLib = `#include <sys/sdt.h>
int dlwork(int x) { DTRACE_PROBE1(dlprov, work, x); return x + 1; }
`

// dlopenMain loads the library (argv[2]) after tracing has started:
//
//	run:  dlopen, 3 calls, dlclose, dlopen again, 2 calls, exit
//	wait: dlopen, "opened"; on SIGUSR1 dlclose, "closed"; wait to be killed
//	loop: dlopen after 300 ms, then a call every 10 ms
const dlopenMain = `#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *lib;
static void closeit(int sig) { dlclose(lib); printf("closed\n"); fflush(stdout); }

static int (*open_lib(const char *path))(int) {
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) { fprintf(stderr, "%s\n", dlerror()); _exit(1); }
	return (int (*)(int))dlsym(lib, "dlwork");
}

int main(int argc, char **argv) {
	int (*f)(int);
	if (argc < 3) return 2;
	if (strcmp(argv[1], "run") == 0) {
		usleep(100000);
		f = open_lib(argv[2]);
		for (int i = 0; i < 3; i++) f(i);
		dlclose(lib);
		f = open_lib(argv[2]);
		for (int i = 0; i < 2; i++) f(10 + i);
		dlclose(lib);
		return 0;
	}
	if (strcmp(argv[1], "wait") == 0) {
		open_lib(argv[2]);
		signal(SIGUSR1, closeit);
		printf("opened\n");
		fflush(stdout);
		for (;;) pause();
	}
	usleep(300000);
	f = open_lib(argv[2]);
	for (int i = 0;; i++) { f(i); usleep(10000); }
}
`

// buildDlopen builds the library and the program that dlopen()s it.
func buildDlopen(t *testing.T) (prog, lib string) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"lib.c": dlopenLib, "main.c": dlopenMain} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib, prog = filepath.Join(dir, "libdlwork.so"), filepath.Join(dir, "main")
	for _, args := range [][]string{{"-shared", "-fPIC", "-o", lib, "lib.c"}, {"-o", prog, "main.c", "-ldl"}} {
		cmd := exec.Command("gcc", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	return prog, lib
}

// startDlopen builds dtrace and the program and starts the program in
// mode (loop or wait), killed when the test ends; it returns dtrace's
// path, the process and its standard output.
func startDlopen(t *testing.T, mode string) (string, *exec.Cmd, io.Reader) {
	t.Helper()
	bin := buildDtrace(t)
	prog, lib := buildDlopen(t)
	target := exec.Command(prog, mode, lib)
	pipe, err := target.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = target.Process.Kill(); _ = target.Wait() })
	return bin, target, pipe
}

// TestDlopenFollowed traces pid and USDT probes of a library that a -c
// process dlopen()s after tracing started, dlclose()s and dlopen()s again:
// every call is counted, the first after each dlopen() included (the
// process is held while the probes are attached), and the probes of the
// closed library are detached in between.
func TestDlopenFollowed(t *testing.T) {
	bin := buildDtrace(t)
	prog, lib := buildDlopen(t)
	cmd := dtraceCmd(bin, "-x", "debug", "-Zqn", `pid$target:libdlwork.so:dlwork:entry { @p[probemod] = count(); @a = sum(arg0); }
		dlprov$target:::work { @u[probefunc] = count(); }`, "-c", prog+" run "+lib)
	stdout, stderr, status := testprog.Run(t, cmd)
	if status != 0 {
		t.Fatalf("dtrace: exit status %d\n%s", status, stderr)
	}
	// 3 + 2 calls; arguments 0+1+2+10+11.
	fields := strings.Fields(stdout)
	want := []string{"libdlwork.so", "5", "24", "dlwork", "5"}
	if strings.Join(fields, " ") != strings.Join(want, " ") {
		t.Errorf("output %q, want the fields %q\nstderr:\n%s", stdout, want, stderr)
	}
	// Enabled at each dlopen(), detached at each dlclose().
	enabled := regexp.MustCompile(`enabled \d+ probes of libdlwork.so`).FindAllString(stderr, -1)
	detached := strings.Count(stderr, "detached the probes of libdlwork.so")
	if len(enabled) != 2 || detached != 2 {
		t.Errorf("enabled %d times, detached %d times, want 2 and 2; stderr:\n%s", len(enabled), detached, stderr)
	}
}

// TestDlopenGrabbed follows a -p process (not held: probes are attached
// soon after its dlopen()) until a probe in the library fires.
func TestDlopenGrabbed(t *testing.T) {
	bin, target, _ := startDlopen(t, "loop")
	cmd := dtraceCmd(bin, "-qn", `pid$target:libdlwork.so:dlwork:entry { printf("%s %s\n", probemod, probefunc); exit(0); }
		tick-30s { printf("timed out\n"); exit(1); }`, "-Z", "-p", strconv.Itoa(target.Process.Pid))
	stdout, stderr, status := testprog.Run(t, cmd)
	if status != 0 || !strings.HasPrefix(stdout, "libdlwork.so dlwork\n") {
		t.Errorf("dtrace: exit status %d\n%s%s", status, stdout, stderr)
	}
}

// TestDlcloseListing lists a process's USDT and pid probes of a library
// it dlopen()ed, and after it dlclose()s the library, no more.
func TestDlcloseListing(t *testing.T) {
	bin, target, pipe := startDlopen(t, "wait")
	lines := bufio.NewScanner(pipe)
	waitFor := func(s string) {
		t.Helper()
		done := make(chan bool, 1)
		go func() { done <- lines.Scan() && lines.Text() == s }()
		select {
		case ok := <-done:
			if !ok {
				t.Fatalf("the program did not say %q", s)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("the program did not say %q within 30 s", s)
		}
	}
	pid := strconv.Itoa(target.Process.Pid)
	list := func() (string, string) {
		stdout, stderr, _ := testprog.Run(t, dtraceCmd(bin, "-l", "-n", "dlprov"+pid+":::", "-n", "pid"+pid+":libdlwork.so:dlwork:entry"))
		return stdout, stderr
	}
	waitFor("opened")
	out, errs := list()
	for _, w := range []string{"dlprov" + pid + "      libdlwork.so", "pid" + pid} {
		if !strings.Contains(out, w) {
			t.Errorf("before dlclose: listing lacks %q:\n%s%s", w, out, errs)
		}
	}
	if err := target.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	waitFor("closed")
	out, errs = list()
	if strings.Contains(out, "libdlwork.so") || !strings.Contains(errs, "failed to match dlprov"+pid+":::: No probe matches description") {
		t.Errorf("after dlclose: stdout\n%s\nstderr\n%s", out, errs)
	}
}
