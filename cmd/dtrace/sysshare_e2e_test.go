//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/bpfobj"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// syscallsWorkload waits (up to 30 s) for the file argv[1], then makes
// known system calls known numbers of times, with known arguments.
const syscallsWorkload = `
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
	int i;

	for (i = 0; i < 3000 && access(argv[1], F_OK) != 0; i++)
		usleep(10000);
	for (i = 0; i < 7; i++)
		syscall(SYS_getppid);
	for (i = 0; i < 4; i++)
		syscall(SYS_umask, 022);
	for (i = 0; i < 3; i++)
		syscall(SYS_kill, getpid(), 0);
	for (i = 0; i < 5; i++)
		syscall(SYS_lseek, -1, 123, 0);
	return 0;
}
`

// TestSyscallShare traces wide syscall descriptions: their probes share
// a program per side and argument count (the dispatcher's program array
// holds it at each system call's number), so dtrace holds a dozen
// programs rather than one per system call (363 and 724 before), and
// probefunc, arguments and errno still come out right for each system
// call: exact counts per probefunc, predicates on arguments and errno.
func TestSyscallShare(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc to build the workload")
	}
	bin := buildDtrace(t)
	work := testprog.BuildSource(t, "syscalls", syscallsWorkload, "-O1")
	tests := []struct {
		name, program string
		maxProgs      int
		want          []string
	}{
		{"entry", `syscall:::entry /pid == $target/ { @[probefunc] = count(); }
END { printa("%s %@d\n", @); }`, 12,
			[]string{"getppid 7", "kill 3", "lseek 5", "umask 4"}},
		{"all", `syscall::: /pid == $target/ { @[probefunc, probename] = count(); }
syscall:::entry /pid == $target && probefunc == "lseek" && (int)arg0 == -1 && arg1 == 123 && arg2 == 0/ { @l = count(); }
syscall:::entry /pid == $target && (probefunc == "umask" || probefunc == "kill")/ { @a[probefunc, arg0 == pid ? 1 : arg0, arg1] = count(); }
syscall:::return /pid == $target && errno != 0/ { @e[probefunc, errno, arg0] = count(); }
END { printa("%s %s %@d\n", @); printa("lseek(-1, 123, 0) %@d\n", @l); printa("%s(%d, %d) %@d\n", @a); printa("%s errno %d = %d %@d\n", @e); }`, 12,
			[]string{"getppid entry 7", "getppid return 7", "kill entry 3", "kill return 3", "lseek entry 5", "lseek return 5",
				"umask entry 4", "umask return 4", "lseek(-1, 123, 0) 5", "umask(18, 0) 4", "kill(1, 0) 3", "lseek errno 9 = -9 5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, progs := runSyscallShare(t, bin, work, tt.program)
			t.Logf("dtrace held %d programs", progs)
			if progs > tt.maxProgs || progs < 3 {
				t.Errorf("dtrace held %d programs, want 3 to %d", progs, tt.maxProgs)
			}
			got := map[string]bool{}
			for _, l := range lines {
				got[l] = true
			}
			for _, w := range tt.want {
				if !got[w] {
					t.Errorf("no line %q in output:\n%s", w, strings.Join(lines, "\n"))
				}
			}
			// Of the workload's own calls only lseek fails.
			for _, l := range lines {
				for _, f := range []string{"getppid", "umask", "kill"} {
					if strings.HasPrefix(l, f+" errno ") {
						t.Errorf("unexpected error line %q", l)
					}
				}
			}
		})
	}
}

// runSyscallShare runs dtrace -q with program and BEGIN printing "begin"
// over the workload (-c), counts the programs dtrace holds once BEGIN has
// fired, then lets the workload go on, and returns dtrace's output lines
// (without "begin") and that count. Everything is bounded by a minute.
func runSyscallShare(t *testing.T, bin, work, program string) ([]string, int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	gofile := filepath.Join(t.TempDir(), "go")
	cmd := exec.CommandContext(ctx, bin, "-q", "-n", program, "-n", `BEGIN { printf("begin\n"); }`, "-c", work+" "+gofile)
	cmd.Env = withoutTesting(os.Environ())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// A pipe of our own: its reads fail at the deadline.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetReadDeadline(deadline); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(r)
	begun := false
	for !begun && sc.Scan() {
		begun = sc.Text() == "begin"
	}
	if !begun {
		cmd.Wait()
		t.Fatalf("no BEGIN (%v): %s", sc.Err(), stderr.String())
	}
	held := bpfobj.NewSet()
	held.AddHeld(cmd.Process.Pid)
	if err := os.WriteFile(gofile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out []string
	for sc.Scan() {
		if l := strings.Fields(sc.Text()); len(l) > 0 {
			out = append(out, strings.Join(l, " "))
		}
	}
	if err := sc.Err(); err != nil {
		t.Errorf("reading dtrace's output: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("dtrace: %v\n%s", err, stderr.String())
	}
	sort.Strings(out)
	return out, len(held.Progs)
}
