//go:build linux

package main

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAnnouncedUSDT starts dtrace with a provider glob that matches
// nothing yet (-Z), then runs a program linked with -G's object: its
// constructor announces it, dtrace enables its probes before main, and
// the probe fires with the program's pid and argument. The program runs
// the same with no dtrace watching, and once dtrace is gone.
func TestAnnouncedUSDT(t *testing.T) {
	bin := buildDtrace(t)
	dir := t.TempDir()
	writeFile(t, dir, "test.c", "#include <sys/sdt.h>\nint main(int argc, char **argv) { DTRACE_PROBE1(test_prov, zero, argc + 41); return 0; }\n")
	writeFile(t, dir, "prov.d", "provider test_prov { probe zero(int); };\n")
	run := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	run("gcc", "-c", "test.c")
	run(bin, "-G", "-s", "prov.d", "test.o")
	run("gcc", "-o", "test", "test.o", "prov.o")
	prog := filepath.Join(dir, "test")
	run(prog) // no dtrace: the announcement fails and changes nothing

	cmd := dtraceCmd(bin, "-qZn", `BEGIN { printf("ready\n"); } test_prov*:::zero { printf("%s %d %d\n", probename, pid, arg0); }`)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() string {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("dtrace exited")
			}
			return l
		case <-time.After(30 * time.Second):
			t.Fatal("timed out waiting for dtrace's output")
		}
		return ""
	}
	if l := next(); l != "ready" {
		t.Fatalf("first line %q", l)
	}
	for i := 0; i < 2; i++ {
		p := exec.Command(prog)
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		pid := p.Process.Pid
		// A program left stopped is killed, and the test fails.
		held := time.AfterFunc(30*time.Second, func() { _ = p.Process.Kill() })
		if err := p.Wait(); err != nil {
			t.Fatalf("program: %v (held: not resumed?)", err)
		}
		held.Stop()
		if l, want := next(), "zero "+strconv.Itoa(pid)+" 42"; l != want {
			t.Fatalf("got %q, want %q", l, want)
		}
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	for l := range lines {
		if strings.TrimSpace(l) != "" {
			t.Errorf("more output: %q", l)
		}
	}
	_ = cmd.Wait()
	run(prog) // dtrace gone: runs unheld
}
