//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// runTraced runs dtrace with args on the loop program (testprog's
// calls.c) making n getppid calls (-c) and returns its standard output
// and error.
func runTraced(t *testing.T, bin, loop string, n int, args ...string) (string, string) {
	t.Helper()
	cmd := dtraceCmd(bin, append(args, "-c", fmt.Sprintf("%s %d", loop, n))...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("dtrace: %v\n%s", err, errs.String())
	}
	return out.String(), errs.String()
}

// tracedLoop skips the test unless it runs as root, and builds dtrace
// and the loop program (testprog's calls.c).
func tracedLoop(t *testing.T) (bin, loop string) {
	t.Helper()
	return buildDtrace(t), testprog.BuildCalls(t, "", "-O2")
}

// perPolicy runs dtrace -q with program over n getppid calls of the loop
// program under each buffer policy, and returns the outputs by policy;
// anything on standard error fails the test. The loop runs on one CPU:
// under switch and fill the records are printed CPU by CPU, as
// dtrace(1M) prints them, so that a loop the scheduler moved to the
// other CPU midway (as on a busy 2-CPU VM, where TestTraceoff failed
// so) printed its later events first.
func perPolicy(t *testing.T, n int, program string, policies ...string) map[string]string {
	t.Helper()
	bin, loop := tracedLoop(t)
	loop = onOneCPU(t, loop)
	outs := map[string]string{}
	for _, policy := range policies {
		out, errs := runTraced(t, bin, loop, n, "-x", "bufpolicy="+policy, "-q", "-n", program)
		if errs != "" {
			t.Errorf("bufpolicy=%s: stderr %s", policy, errs)
		}
		outs[policy] = out
	}
	return outs
}

// onOneCPU returns the command that runs cmd on one CPU the test may
// run on (taskset; util-linux is in every Debian system). cmd keeps its
// pid, so $target is cmd's.
func onOneCPU(t *testing.T, cmd string) string {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	for cpu := range 1024 {
		if set.IsSet(cpu) {
			return fmt.Sprintf("taskset -c %d %s", cpu, cmd)
		}
	}
	t.Fatal("no CPU to run on")
	return ""
}

// TestStreamNoDrops: a tight loop of 2,000,000 system calls, each
// printing a line, at default options: every line comes out and nothing
// is dropped (the readers keep the kernel rings empty while the records
// are decoded).
func TestStreamNoDrops(t *testing.T) {
	if testing.Short() {
		t.Skip("2,000,000 events")
	}
	bin, loop := tracedLoop(t)
	const n = 2000000
	out, errs := runTraced(t, bin, loop, n, "-q", "-n", `syscall::getppid:entry /pid == $target/ { printf("%d\n", ++i); }`)
	lines := strings.Split(strings.TrimSuffix(out, "\n\n"), "\n")
	// Every count from 1 to n, once: the order is per CPU buffer, and a
	// loop that migrates between CPUs near the end (a loaded machine)
	// may have its last lines read before another CPU's earlier ones.
	seen := make([]bool, n+1)
	bad := 0
	for _, l := range lines {
		v, err := strconv.Atoi(l)
		if err != nil || v < 1 || v > n || seen[v] {
			bad++
			continue
		}
		seen[v] = true
	}
	if len(lines) != n || bad != 0 {
		t.Errorf("%d lines, %d of them not a count from 1 to %d seen once; want %d", len(lines), bad, n, n)
	}
	if strings.Contains(errs, "drop") {
		t.Errorf("drops reported:\n%s", errs)
	}
}

// TestRingPolicy: bufpolicy=ring with a 64k buffer over 100,000 events
// keeps only the newest records of each CPU and prints them at exit in
// time order, the last one the 100,000th, without a drop message.
func TestRingPolicy(t *testing.T) {
	bin, loop := tracedLoop(t)
	const n = 100000
	out, errs := runTraced(t, bin, loop, n, "-x", "bufpolicy=ring", "-b", "64k", "-q", "-n",
		`syscall::getppid:entry /pid == $target/ { printf("%d\n", ++i); }`)
	lines := strings.Split(strings.TrimSuffix(out, "\n\n"), "\n")
	if len(lines) < 100 || len(lines) >= n || lines[len(lines)-1] != fmt.Sprint(n) {
		t.Errorf("%d lines, the last %q; want 100 to %d, the last %d", len(lines), lines[len(lines)-1], n-1, n)
	}
	// In time order: increasing (a CPU the loop left keeps its older
	// records, so the numbers may jump).
	for i := 1; i < len(lines); i++ {
		if atoi(lines[i]) <= atoi(lines[i-1]) {
			t.Fatalf("line %d %q after %q: not in time order", i, lines[i], lines[i-1])
		}
	}
	if errs != "" {
		t.Errorf("stderr: %s", errs)
	}
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}

// startRing starts dtrace -q on program under bufpolicy=ring with its
// output to file; the test kills it when it ends.
func startRing(t *testing.T, bin, file, program string) *testprog.Running {
	t.Helper()
	return testprog.StartCmd(t, dtraceCmd(bin, "-x", "bufpolicy=ring", "-q", "-o", file, "-n", program))
}

// stopRing interrupts a startRing dtrace, which must exit 0 within a
// minute.
func stopRing(t *testing.T, r *testprog.Running) {
	t.Helper()
	r.Cmd.Process.Signal(syscall.SIGINT)
	if status := r.Wait(t, time.Minute); status != 0 {
		t.Fatalf("dtrace: %v\n%s", r.Err(), r.Stderr.String())
	}
}

// TestSnapshotSignal: kill -USR1 writes the ring's records to the -o
// file, after a header line, while dtrace goes on tracing.
func TestSnapshotSignal(t *testing.T) {
	bin := buildDtrace(t)
	file := t.TempDir() + "/out"
	r := startRing(t, bin, file, `tick-10ms { printf("%d\n", ++i); }`)
	snapshot := func(k int) string {
		t.Helper()
		time.Sleep(500 * time.Millisecond)
		want := fmt.Sprintf("=== snapshot %d at ", k)
		// A USR1 that comes before dtrace asks for it is lost (the Go
		// runtime ignores it): signal again every 2 s until it shows.
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
			if err := r.Cmd.Process.Signal(syscall.SIGUSR1); err != nil {
				t.Fatal(err)
			}
			for again := time.Now().Add(2 * time.Second); time.Now().Before(again); time.Sleep(50 * time.Millisecond) {
				data, _ := os.ReadFile(file)
				if i := strings.Index(string(data), want); i >= 0 && strings.Contains(string(data[i:]), "by signal USR1 ===\n") {
					snap := string(data[i:])
					if j := strings.Index(snap[1:], "=== snapshot "); j >= 0 {
						snap = snap[:j+1] // not the snapshot a repeated signal took after it
					}
					return snap
				}
			}
		}
		t.Fatalf("no %q in the file; stderr %s", want, r.Stderr.String())
		return ""
	}
	// On a busy machine the first signals may come before tracing has
	// started: their snapshots are empty, and the first one with records
	// must begin at the first record.
	k, first := 1, snapshot(1)
	for ; strings.Count(first, "\n") == 1 && k < 20; first = snapshot(k) {
		k++
	}
	if lines := strings.Split(strings.TrimSpace(first), "\n"); len(lines) < 3 || lines[1] != "1" {
		t.Errorf("first snapshot %q: want the header then records from 1", first)
	}
	if err := r.Cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatal("dtrace exited after the snapshot")
	}
	second := snapshot(k + 1)
	if !strings.HasPrefix(second, fmt.Sprintf("=== snapshot %d", k+1)) || len(strings.Split(strings.TrimSpace(second), "\n")) < 3 {
		t.Errorf("second snapshot %q: want new records", second)
	}
	stopRing(t, r)
}

// TestSnapshotLimit: snapshot(2) on a probe that fires 10,000 times
// takes exactly 2 snapshots, under the ring policy and the default.
func TestSnapshotLimit(t *testing.T) {
	for policy, out := range perPolicy(t, 10000, `syscall::getppid:entry /pid == $target/ { printf("%d\n", ++i); snapshot(2); }`, "ring", "switch") {
		if n := strings.Count(out, "=== snapshot "); n != 2 || !strings.Contains(out, "=== snapshot 2 at ") ||
			!strings.Contains(out, ":getppid:entry ===\n") {
			t.Errorf("bufpolicy=%s: %d snapshots, want 2:\n%.500s", policy, n, out)
		}
	}
}

// TestSnapshotTick: snapshot() fired by tick-1s writes the ring's
// records to the -o file while dtrace goes on running.
func TestSnapshotTick(t *testing.T) {
	bin := buildDtrace(t)
	file := t.TempDir() + "/out"
	r := startRing(t, bin, file, `tick-100ms { printf("%d\n", ++i); } tick-1s { snapshot(); }`)
	var data []byte
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		data, _ = os.ReadFile(file)
		if i := strings.Index(string(data), "=== snapshot 2 at "); i >= 0 {
			break
		}
	}
	got := string(data)
	i := strings.Index(got, "=== snapshot 1 at ")
	if i < 0 || !strings.Contains(got, " by profile:::tick-1s ===\n") || !strings.Contains(got, "=== snapshot 2 at ") {
		t.Fatalf("file while running: %q; stderr %s", got, r.Stderr.String())
	}
	if lines := strings.Split(got[i:], "\n"); len(lines) < 3 || atoi(lines[1]) < 1 {
		t.Errorf("no records after the first header: %q", got[i:])
	}
	if err := r.Cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatal("dtrace is not running after the snapshots")
	}
	stopRing(t, r)
}

// TestTraceoff: traceoff(2) at every 100th event (the 50th, 150th, ...)
// and traceon() at every 100th (the 100th, 200th, ...) leave exactly
// events 1-50, 101-150 and 201-1000 in the output under every buffer
// policy (the third traceoff(2) does nothing), and the aggregation
// counts all 1,000 events.
func TestTraceoff(t *testing.T) {
	var want strings.Builder
	for i := 1; i <= 1000; i++ {
		if i <= 50 || i > 100 && i <= 150 || i > 200 {
			fmt.Fprintf(&want, "%d\n", i)
		}
	}
	want.WriteString("count 1000\n\n")
	for policy, out := range perPolicy(t, 1000, `
syscall::getppid:entry /pid == $target/ { printf("%d\n", ++i); @n = count(); }
syscall::getppid:entry /pid == $target && i % 100 == 50/ { traceoff(2); }
syscall::getppid:entry /pid == $target && i % 100 == 0/ { traceon(); }
END { printa("count %@d\n", @n); }`, "switch", "fill", "ring") {
		if out != want.String() {
			t.Errorf("bufpolicy=%s: output\n%.300s...\nwant\n%.300s...", policy, out, want.String())
		}
	}
}
