package loader

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/consumer"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/internal/testutil/bpfobj"
	"github.com/dtrace-go/dtrace/internal/testutil/leakcheck"
	"github.com/dtrace-go/dtrace/program"
)

const childEnv = "DTRACE_LOADER_KILL_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runKillChild())
	}
	os.Exit(leakcheck.Run(m))
}

// runKillChild loads and attaches a tick program, opens the buffers,
// prints the ids of its programs and maps, then waits to be killed.
func runKillChild() int {
	spec := testSpec(
		&program.ClauseSpec{Probes: []string{"BEGIN"}, EPID: 1, Insns: emitClause("dt_clause_0")},
		&program.ClauseSpec{Probes: []string{"tick-1ms"}, EPID: 2, Insns: emitClause("dt_clause_1")},
	)
	fail := func(err error) int { fmt.Println("error:", err); return 1 }
	plan, err := NewPlan(spec, newRegistry(), PlanOptions{})
	if err != nil {
		return fail(err)
	}
	o, err := Load(spec, plan, Options{})
	if err != nil {
		return fail(err)
	}
	bufs, err := consumer.OpenBuffers(o.Map(abi.MapBuf), consumer.BufferOptions{Size: 4096})
	if err != nil {
		return fail(err)
	}
	_ = bufs
	if err := o.Attach(); err != nil {
		return fail(err)
	}
	if err := o.Run(1, nil); err != nil {
		return fail(err)
	}
	for _, pp := range plan.Probes {
		info, err := o.Program(pp.Probe.ID).Info()
		if err != nil {
			return fail(err)
		}
		id, _ := info.ID()
		fmt.Println("prog", id)
	}
	for name := range o.maps {
		info, err := o.Map(name).Info()
		if err != nil {
			return fail(err)
		}
		id, _ := info.ID()
		fmt.Println("map", id)
	}
	fmt.Println("ready")
	time.Sleep(time.Minute)
	return 0
}

// TestKilledProcessLeavesNothing starts a child that loads and attaches a
// tick program, SIGKILLs it, and checks that every program, map and link
// it created is gone from the kernel.
func TestKilledProcessLeavesNothing(t *testing.T) {
	before, err := bpfobj.Kernel()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var progs, maps []uint32
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 1 && f[0] == "ready" {
			break
		}
		if len(f) != 2 {
			t.Fatalf("child: %s", sc.Text())
		}
		id, err := strconv.ParseUint(f[1], 10, 32)
		if err != nil {
			t.Fatalf("child: %s", sc.Text())
		}
		switch f[0] {
		case "prog":
			progs = append(progs, uint32(id))
		case "map":
			maps = append(maps, uint32(id))
		default:
			t.Fatalf("child: %s", sc.Text())
		}
	}
	during, err := bpfobj.Kernel()
	if err != nil {
		t.Fatal(err)
	}
	// What the child holds descriptors for: the programs and maps it
	// printed, and the links attaching its programs.
	held := bpfobj.NewSet()
	held.AddHeld(cmd.Process.Pid)
	for _, id := range progs {
		if before.Progs[id] || !during.Progs[id] || !held.Progs[id] {
			t.Fatalf("program %d: before %v, during %v, held %v", id, before.Progs[id], during.Progs[id], held.Progs[id])
		}
	}
	for _, id := range maps {
		if before.Maps[id] || !during.Maps[id] || !held.Maps[id] {
			t.Fatalf("map %d: before %v, during %v, held %v", id, before.Maps[id], during.Maps[id], held.Maps[id])
		}
	}
	if len(progs) != 2 || len(maps) != 3 || len(held.Links) == 0 {
		t.Fatalf("child made progs %v, maps %v, links %v", progs, maps, held.Links)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	left, err := held.WaitGone(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Fatalf("left behind after SIGKILL: %v", left)
	}
}
