//go:build linux

package hardstop

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/bpfobj"
	"github.com/dtrace-go/dtrace/internal/testprog"
	"github.com/dtrace-go/dtrace/provider/pid"
)

// held is what a process holds descriptors for: its programs by id with
// their types, and its links by id with their types and programs.
type held struct {
	progs map[uint32]string // prog id -> prog_type
	links map[uint32][2]string
}

// heldBy reads /proc/PID/fdinfo: a program's descriptor shows prog_type
// and prog_id, a link's link_type, link_id and prog_id.
func heldBy(pid int) held {
	h := held{progs: map[uint32]string{}, links: map[uint32][2]string{}}
	dir := fmt.Sprintf("/proc/%d/fdinfo", pid)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		f := map[string]string{}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				f[k] = strings.TrimSpace(v)
			}
		}
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
		r.waitLine(t, "ready", 3*time.Minute)
		toReady := time.Since(start)
		h := heldBy(r.cmd.Process.Pid)
		var uprobeProgs []uint32
		for id, typ := range h.progs {
			if typ == progTypeKprobe {
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
		set.AddHeld(r.cmd.Process.Pid)
		var gone time.Time
		if !kill {
			if code := r.wait(t, 2*time.Minute); code != 0 {
				t.Fatalf("exit %d; stderr %q", code, r.stderr.String())
			}
			gone = time.Now()
			want := "snprintf " + strconv.Itoa(n)
			found := false
			for _, l := range strings.Split(r.stdout.String(), "\n") {
				c, ok := strings.CutPrefix(l, "snprintf ")
				v, _ := strconv.Atoi(c)
				found = found || l == want || mode == "grab" && ok && v > 0
			}
			if !found {
				t.Errorf("no line %q in the output:\n%s", want, r.stdout.String())
			}
		} else {
			// The time to reap counts from the kill: the process's exit
			// is where its links are closed.
			gone = time.Now()
			r.cmd.Process.Signal(syscall.SIGKILL)
			r.wait(t, 2*time.Minute)
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
