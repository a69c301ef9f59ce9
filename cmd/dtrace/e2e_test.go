//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// buildDtrace skips the test unless it runs as root (tracing needs it)
// and builds the command into the test's temporary directory, or returns
// DTRACE_TEST_BIN when set: a binary built on the host for the test
// binary run in a guest (where building it would take minutes).
func buildDtrace(t *testing.T) string {
	t.Helper()
	testprog.NeedRoot(t, "BPF")
	if bin := os.Getenv("DTRACE_TEST_BIN"); bin != "" {
		return bin
	}
	return testprog.BuildCmd(t, t.TempDir(), "dtrace")
}

// TestUnprivileged runs dtrace as an unprivileged user: one clear line on
// stderr and exit status 1.
func TestUnprivileged(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to switch to an unprivileged user")
	}
	bin := buildDtrace(t)
	// The unprivileged user must be able to reach the binary.
	for d := filepath.Dir(bin); d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-n", "BEGIN { exit(0); }")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	stdout, stderr, status := testprog.Run(t, cmd)
	if status != 1 {
		t.Fatalf("exit status %d, want 1; stderr %q", status, stderr)
	}
	want := "dtrace: failed to initialize dtrace: DTrace requires additional privileges\n"
	if stderr != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
	if stdout != "" {
		t.Errorf("stdout = %q, want nothing", stdout)
	}
}

// TestEndToEnd runs small programs through the real kernel and checks
// output and exit status.
func TestEndToEnd(t *testing.T) {
	bin := buildDtrace(t)
	tests := []struct {
		name   string
		args   []string
		stdout string
		status int
	}{
		{"printf", []string{"-qn", `BEGIN { printf("%d %s|%5x|\n", 6*7, "str", 255); exit(0); }`}, "42 str|   ff|\n\n", 0},
		{"exit status", []string{"-qn", "BEGIN { exit(3); }"}, "\n", 3},
		{"end after exit", []string{"-qn", `BEGIN { exit(0); } END { printf("end\n"); }`}, "end\n\n", 0},
		{"count", []string{"-qn", "BEGIN { @ = count(); @ = count(); exit(0); }"}, "\n                2\n", 0},
		{"keys sorted by value", []string{"-qn", `BEGIN { @[1] = sum(5); @[2] = sum(3); exit(0); }`},
			"\n        2                3\n        1                5\n", 0},
		{"tick", []string{"-qn", `tick-10ms /++i == 3/ { printf("third\n"); exit(0); }`}, "third\n\n", 0},
		{"macro args", []string{"-qn", `BEGIN { printf("%d %s\n", $1, $$2); exit(0); }`, "7", "x"}, "7 x\n\n", 0},
		{"thread-local", []string{"-qn", `BEGIN { self->x = 5; } BEGIN { printf("%d\n", self->x); exit(0); }`}, "5\n\n", 0},
		{"system", []string{"-wqn", `BEGIN { printf("before\n"); system("echo %s %d", probename, 4 + 1); printf("after\n"); exit(0); }`},
			"before\nBEGIN 5\nafter\n\n", 0},
		// struct mutex's owner word: the task, flags in its low 3 bits.
		{"mutex", []string{"-qn", `BEGIN { m = (struct mutex *)alloca(sizeof(struct mutex)); m->owner.counter = 0xffff888812345607;
printf("%d %p %d %d\n", mutex_owned(m), mutex_owner(m), mutex_type_adaptive(m), mutex_type_spin(m)); m->owner.counter = 7; printf("%d\n", mutex_owned(m)); exit(0); }`},
			"1 ffff888812345600 1 0\n0\n\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := dtraceCmd(bin, tt.args...)
			stdout, stderr, status := testprog.Run(t, cmd)
			if status != tt.status {
				t.Errorf("status %d, want %d; stderr %q", status, tt.status, stderr)
			}
			if stdout != tt.stdout {
				t.Errorf("stdout %q, want %q; stderr %q", stdout, tt.stdout, stderr)
			}
		})
	}
}

// dtraceCmd is the command bin args with the environment less
// _DTRACE_TESTING, as a user runs dtrace.
func dtraceCmd(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = withoutTesting(os.Environ())
	return cmd
}

func withoutTesting(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "_DTRACE_TESTING=") {
			out = append(out, e)
		}
	}
	return out
}

// TestHeaderUSDT makes a header with dtrace -h, builds a C program with
// it (needs gcc and systemtap-sdt-dev's <sys/sdt.h>) and traces its
// probes, a semaphore-guarded one among them, with the usdt provider.
func TestHeaderUSDT(t *testing.T) {
	bin := buildDtrace(t)
	dir := t.TempDir()
	write := func(name, text string) { writeFile(t, dir, name, text) }
	write("myprov.d", "provider myprov {\n\tprobe work__start(int, char *);\n\tprobe work__done();\n};\n")
	write("app.c", `#include "myprov.h"
int main(void) {
	for (int i = 0; i < 7; i++) {
		if (MYPROV_WORK_START_ENABLED())
			MYPROV_WORK_START(i, "job");
		MYPROV_WORK_DONE();
	}
	return 0;
}
`)
	run := func(name string, args ...string) string {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	run(bin, "-h", "-s", "myprov.d")
	if h, err := os.ReadFile(filepath.Join(dir, "myprov.h")); err != nil || !strings.Contains(string(h), "MYPROV_WORK_START_ENABLED") {
		t.Fatalf("header: %v\n%s", err, h)
	}
	run("gcc", "-O2", "-o", "app", "app.c")
	run(bin, "-G", "-s", "myprov.d")
	if _, err := os.Stat(filepath.Join(dir, "myprov.o")); err != nil {
		t.Fatalf("-G wrote no object: %v", err)
	}
	cmd := exec.Command(bin, "-qn", `myprov$target:::work-start { @s = sum(arg0); } myprov$target:::work-done { @d = count(); }`, "-c", "./app")
	cmd.Dir = dir
	cmd.Env = withoutTesting(os.Environ())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dtrace: %v", err)
	}
	// 0+1+...+6 = 21 from the guarded probe, 7 firings of the other.
	want := "\n               21\n                7\n"
	if string(out) != want {
		t.Errorf("output %q, want %q", out, want)
	}
}

// TestFlowIndent checks -F on pid entry and return probes: the nesting
// of the DTrace paper's Figure 3.
func TestFlowIndent(t *testing.T) {
	bin := buildDtrace(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "flow.c")
	if err := os.WriteFile(src, []byte("int leaf(int x) { return x + 1; }\nint mid(int x) { return leaf(x) * 2; }\nint main() { return mid(1) == 4 ? 0 : 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "flow")
	if out, err := exec.Command("gcc", "-O0", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	cmd := dtraceCmd(bin, "-F", "-n", "pid$target:a.out:mid:entry,pid$target:a.out:leaf:entry,pid$target:a.out:leaf:return,pid$target:a.out:mid:return {}", "-c", prog)
	cmd.Env = append(cmd.Env, "_DTRACE_TESTING=t")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dtrace: %v", err)
	}
	var got []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimRight(l, " "); l != "" {
			got = append(got, l)
		}
	}
	want := []string{"FUNCTION", " -> mid", "   -> leaf", "   <- leaf", " <- mid"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// writeFile writes text to the file name in dir.
func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
