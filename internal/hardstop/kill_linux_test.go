//go:build linux

package hardstop

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/dtrace-go/dtrace/internal/testutil/bpfobj"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/provider/pid"
)

// killAll kills every process running the executable at path.
func killAll(path string) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && exe == path {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// uprobeEvents returns the lines of tracefs's uprobe_events.
func uprobeEvents(t *testing.T) map[string]bool {
	t.Helper()
	set := map[string]bool{}
	for _, p := range []string{"/sys/kernel/tracing/uprobe_events", "/sys/kernel/debug/tracing/uprobe_events"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" {
				set[l] = true
			}
		}
		return set
	}
	t.Fatal("no uprobe_events in tracefs")
	return nil
}

// TestSIGKILLLeavesNothing kills dtrace with SIGKILL at 20 random moments
// of a pid$target:libc.so.6:str*:entry, syscall:::entry run (libc.so.6:*
// with DTRACE_HARDSTOP_FULL=1) (compiling,
// loading, attaching, running and printing) and checks that every BPF
// program, map and link the killed process held is gone from the kernel
// and that uprobe_events is as it was. Other tests on the machine load
// BPF programs meanwhile, so only the objects dtrace itself held (read
// from its /proc/PID/fdinfo until the moment of the kill) are compared,
// not global counts.
func TestSIGKILLLeavesNothing(t *testing.T) {
	needRoot(t)
	prog := testprog.Build(t, "loop", []string{"loop.c"}, "-O2")
	defer killAll(prog)
	// The run of issue 14 probes every function of libc: some 3,500
	// uprobe links. A SIGKILLed process's links are closed one by one in
	// its exit, each unregistering its uprobe behind an RCU grace period,
	// which takes minutes on a loaded machine; so by default the kills
	// are of a run with libc's str* functions, and DTRACE_HARDSTOP_FULL=1
	// asks for the whole of libc.
	funcs := "str*"
	if os.Getenv("DTRACE_HARDSTOP_FULL") != "" {
		funcs = "*"
	}
	script := `BEGIN { printf("ready\n"); }
pid$target:libc.so.6:` + funcs + `:entry, syscall:::entry { @[probefunc] = count(); }`

	// One whole run measures the phases: start to the first BPF object
	// (compiling), to tracing (loading, attaching) and SIGINT to exit
	// (printing).
	start := time.Now()
	r := startDtrace(t, "-q", "-c", prog, "-n", script)
	var toHeld time.Duration
	deadline := start.Add(3 * time.Minute)
	for first := bpfobj.NewSet(); toHeld == 0; time.Sleep(time.Millisecond) {
		first.AddHeld(r.Cmd.Process.Pid)
		select {
		case <-r.Done():
			t.Fatalf("whole run: dtrace exited before loading; stderr %q", r.Stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("whole run: dtrace held no BPF object after 3 minutes")
		}
		if !first.Empty() {
			toHeld = time.Since(start)
		}
	}
	r.WaitLine(t, "ready", 3*time.Minute)
	toReady := time.Since(start)
	time.Sleep(200 * time.Millisecond)
	r.Cmd.Process.Signal(syscall.SIGINT)
	stop := time.Now()
	if code := r.Wait(t, 3*time.Minute); code != 0 {
		t.Fatalf("whole run: exit %d; stderr %q", code, r.Stderr.String())
	}
	toExit := time.Since(stop)
	t.Logf("whole run: %v to the first BPF object, %v to tracing, %v from SIGINT to exit, %d bytes printed", toHeld, toReady, toExit, len(r.Stdout.String()))

	eventsBefore := uprobeEvents(t)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	phases := map[string]int{}
	holding := 0
	for i := 0; i < 20; i++ {
		// 4 kills while compiling, 8 while loading and attaching, 4
		// while it runs, 4 after SIGINT, while the aggregation prints.
		// Kills after tracing started wait for BEGIN's line, then a
		// random moment: the time a run takes to start varies with the
		// machine's load.
		var delay, afterInt time.Duration
		afterReady, afterHeld, interrupt := false, false, false
		switch {
		case i < 4:
			// In the first half: the whole run's first object came late
			// (a cold start), later runs' sooner.
			delay = time.Duration(rng.Int63n(int64(toHeld/2) + 1))
		case i < 12:
			// After this run's first object: loading takes a fraction
			// of the whole run's start in a slow guest.
			afterHeld = true
			delay = time.Duration(rng.Int63n(int64(toReady-toHeld)/2 + 1))
		case i < 16:
			afterReady = true
			delay = time.Duration(rng.Int63n(int64(500 * time.Millisecond)))
		default:
			afterReady, interrupt = true, true
			delay = time.Duration(rng.Int63n(int64(200 * time.Millisecond)))
			afterInt = time.Duration(rng.Int63n(int64(toExit) + 1))
		}
		r := startDtrace(t, "-q", "-c", prog, "-n", script)
		dpid := r.Cmd.Process.Pid
		held := bpfobj.NewSet()
		ready := false
		poll := func(until time.Time, untilReady bool) {
			for time.Now().Before(until) && !(untilReady && ready) && !(afterHeld && !held.Empty()) {
				held.AddHeld(dpid)
				ready = ready || r.HasLine("ready")
				time.Sleep(time.Millisecond)
			}
		}
		if afterReady {
			poll(time.Now().Add(3*time.Minute), true)
			if !ready {
				t.Fatalf("kill %d: dtrace did not start tracing; stderr %q", i, r.Stderr.String())
			}
		}
		if afterHeld {
			poll(time.Now().Add(3*time.Minute), true)
			afterHeld = false
		}
		poll(time.Now().Add(delay), false)
		phase := "compiling"
		switch {
		case ready:
			phase = "running"
		case !held.Empty():
			phase = "loading/attaching"
		}
		if interrupt {
			r.Cmd.Process.Signal(syscall.SIGINT)
			poll(time.Now().Add(afterInt), false)
			phase = "printing"
		}
		held.AddHeld(dpid)
		killed := time.Now()
		r.Cmd.Process.Signal(syscall.SIGKILL)
		// The -c process dies with dtrace (kill-on-last-close, as
		// illumos's dtrace sets it); until it has, it holds dtrace's
		// stdout open.
		select {
		case <-r.Done():
		case <-time.After(30 * time.Second):
			t.Errorf("kill %d (%s): the -c process outlived dtrace", i, phase)
			for ended := false; !ended; {
				killAll(prog)
				select {
				case <-r.Done():
					ended = true
				case <-time.After(10 * time.Millisecond):
				}
			}
		}
		reaped := time.Since(killed)
		phases[phase]++
		if !held.Empty() {
			holding++
		}
		left, err := held.WaitGone(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) > 0 {
			t.Errorf("kill %d after %v (%s): left behind %v", i, delay, phase, left)
		}
		t.Logf("kill %d after %v (%s): held %d programs, %d maps, %d links; reaped %v after the kill, all gone %v after it",
			i, delay, phase, len(held.Progs), len(held.Maps), len(held.Links), reaped, time.Since(killed))
	}
	var added []string
	for try := 0; try < 40; try++ {
		added = nil
		for l := range uprobeEvents(t) {
			if !eventsBefore[l] {
				added = append(added, l)
			}
		}
		if len(added) == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(added) > 0 {
		t.Errorf("uprobe_events gained %q", added)
	}
	t.Logf("kills by phase: %v", phases)
	// The test means something only if dtrace had made objects when
	// killed more often than not.
	if holding < 10 {
		t.Errorf("only %d of 20 kills found dtrace holding BPF objects", holding)
	}
}

// held is what a process holds descriptors for: its programs by id with
// their types, and its links by id with their types and programs.
type held struct {
	progs map[uint32]string // prog id -> prog_type
	links map[uint32][2]string
}

// heldBy reads /proc/PID/fdinfo (bpfobj.FDInfo).
func heldBy(pid int) held {
	h := held{progs: map[uint32]string{}, links: map[uint32][2]string{}}
	for _, f := range bpfobj.FDInfo(pid) {
		switch {
		case f["link_id"] != "":
			id, _ := strconv.ParseUint(f["link_id"], 10, 32)
			h.links[uint32(id)] = [2]string{f["link_type"], f["prog_id"]}
		case f["prog_id"] != "":
			id, _ := strconv.ParseUint(f["prog_id"], 10, 32)
			h.progs[uint32(id)] = f["prog_type"]
		}
	}
	return h
}

// progName returns the name of the BPF program with id, or "".
func progName(id uint32) string {
	p, err := ebpf.NewProgramFromID(ebpf.ProgramID(id))
	if err != nil {
		return ""
	}
	defer p.Close()
	info, err := p.Info()
	if err != nil {
		return ""
	}
	return info.Name
}

// progTypeKprobe is BPF_PROG_TYPE_KPROBE, the type of uprobe programs.
const progTypeKprobe = "2"

// sharedTrigger calls snprintf argv[1] times, then sleeps argv[2] ms.
const sharedTrigger = `#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
	char buf[32];
	int n = atoi(argv[1]);
	for (int i = 0; i < n; i++)
		snprintf(buf, sizeof buf, "%d", i);
	usleep(atoi(argv[2]) * 1000);
	return 0;
}
`

// TestWidePidSharesOneProgram checks that pid$target:libc.so.6:*:entry
// (some 3,500 probes) runs one program attached by one uprobe_multi link
// (one perf event per function where the kernel has no uprobe_multi: s*
// functions only there),
// that the program tells the probes apart (a trigger's n calls of
// snprintf count n under its probefunc), and that a SIGKILLed dtrace's
// program and link are gone within seconds (a program and a link per
// function took minutes to be reaped).
func TestWidePidSharesOneProgram(t *testing.T) {
	needRoot(t)
	prog := testprog.BuildSource(t, "snprintfs", sharedTrigger, "-O2")
	const n = 777
	// Without uprobe_multi (before 6.6) every function is a perf event
	// whose closing waits for the kernel: libc's s* functions there.
	funcs := "*"
	if !pid.Multi() {
		funcs = "s*"
	}
	script := `BEGIN { printf("ready\n"); }
pid$target:libc.so.6:` + funcs + `:entry { @[probefunc] = count(); }
END { printa("%s %@d\n", @); }`

	var reap []time.Duration
	for _, mode := range []string{"exit", "kill", "grab"} {
		kill := mode == "kill"
		start := time.Now()
		args := []string{"-q", "-c", prog + " " + strconv.Itoa(n) + " 3000", "-n", script}
		if mode == "grab" {
			// -p: libc is mapped when the probes are attached, and the
			// kernel refuses some of its functions' first instructions
			// (a lock prefix): they are left out, the rest still one link.
			loop := testprog.Start(t, testprog.Build(t, "loop", []string{"loop.c"}, "-O2"))
			time.Sleep(200 * time.Millisecond) // for the dynamic linker to map libc
			args = []string{"-q", "-p", strconv.Itoa(loop.Pid()), "-n", script + " tick-1s { exit(0); }"}
		}
		r := startDtrace(t, args...)
		r.WaitLine(t, "ready", 3*time.Minute)
		toReady := time.Since(start)
		h := heldBy(r.Cmd.Process.Pid)
		var uprobeProgs []uint32
		for id, typ := range h.progs {
			// The uprobe on the dynamic linker that follows dlopen()
			// (dt_linkmap) is not the clause's.
			if typ == progTypeKprobe && progName(id) != "dt_linkmap" {
				uprobeProgs = append(uprobeProgs, id)
			}
		}
		// The links of the uprobe program, by type (tick-1s has its own).
		linkTypes := map[string]int{}
		nlinks := 0
		for _, l := range h.links {
			if len(uprobeProgs) == 1 && l[1] == strconv.FormatUint(uint64(uprobeProgs[0]), 10) {
				linkTypes[l[0]]++
				nlinks++
			}
		}
		t.Logf("%s: tracing after %v holding %d programs (%d uprobe programs), the clause's links %v", mode, toReady, len(h.progs), len(uprobeProgs), linkTypes)
		if len(uprobeProgs) != 1 {
			t.Errorf("%d uprobe programs for the clause (%v), want 1", len(uprobeProgs), uprobeProgs)
		}
		if pid.Multi() {
			if nlinks != 1 || linkTypes["uprobe_multi"] != 1 {
				t.Errorf("links %v, want one uprobe_multi", linkTypes)
			}
		} else if nlinks < 100 {
			// One perf-event uprobe per function, all of one program.
			t.Errorf("%d links, want one per s* function of libc", nlinks)
		}
		set := bpfobj.NewSet()
		set.AddHeld(r.Cmd.Process.Pid)
		var gone time.Time
		if !kill {
			if code := r.Wait(t, 2*time.Minute); code != 0 {
				t.Fatalf("exit %d; stderr %q", code, r.Stderr.String())
			}
			gone = time.Now()
			want := "snprintf " + strconv.Itoa(n)
			found := false
			for _, l := range strings.Split(r.Stdout.String(), "\n") {
				c, ok := strings.CutPrefix(l, "snprintf ")
				v, _ := strconv.Atoi(c)
				found = found || l == want || mode == "grab" && ok && v > 0
			}
			if !found {
				t.Errorf("no line %q in the output:\n%s", want, r.Stdout.String())
			}
		} else {
			// The time to reap counts from the kill: the process's exit
			// is where its links are closed.
			gone = time.Now()
			r.Cmd.Process.Signal(syscall.SIGKILL)
			r.Wait(t, 2*time.Minute)
		}
		left, err := set.WaitGone(60 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		reap = append(reap, time.Since(gone))
		if len(left) > 0 {
			t.Errorf("%s: after 60 s the kernel still has %v", mode, left)
		}
	}
	t.Logf("objects gone %v after a normal exit, %v after SIGKILL, %v after -p's exit", reap[0], reap[1], reap[2])
	if pid.Multi() && reap[1] > 20*time.Second {
		t.Errorf("the SIGKILLed dtrace's objects took %v to go", reap[1])
	}
}
