package loader

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/dtrace-go/dtrace/codegen"
	"github.com/dtrace-go/dtrace/consumer"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/internal/leakcheck"
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
		&codegen.ClauseSpec{Probes: []string{"BEGIN"}, EPID: 1, Insns: emitClause("dt_clause_0")},
		&codegen.ClauseSpec{Probes: []string{"tick-1ms"}, EPID: 2, Insns: emitClause("dt_clause_1")},
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

type idSets struct {
	progs, maps, links map[uint32]bool
	linkProg           map[uint32]uint32 // link id -> program id
}

func kernelIDs(t *testing.T) idSets {
	t.Helper()
	s := idSets{progs: kernelIDList(t, ebpf.ProgramGetNextID), maps: kernelIDList(t, ebpf.MapGetNextID),
		links: map[uint32]bool{}, linkProg: map[uint32]uint32{}}
	it := new(link.Iterator)
	defer it.Close()
	for it.Next() {
		s.links[uint32(it.ID)] = true
		if info, err := it.Link.Info(); err == nil {
			s.linkProg[uint32(it.ID)] = uint32(info.Program)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

// kernelIDList returns the ids of the kernel's objects of one kind, which
// next (ebpf.ProgramGetNextID, ebpf.MapGetNextID) walks through.
func kernelIDList[ID ~uint32](t *testing.T, next func(ID) (ID, error)) map[uint32]bool {
	t.Helper()
	ids := map[uint32]bool{}
	for id := ID(0); ; {
		n, err := next(id)
		if errors.Is(err, os.ErrNotExist) {
			return ids
		}
		if err != nil {
			t.Fatal(err)
		}
		ids[uint32(n)] = true
		id = n
	}
}

// TestKilledProcessLeavesNothing starts a child that loads and attaches a
// tick program, SIGKILLs it, and checks that every program, map and link
// it created is gone from the kernel.
func TestKilledProcessLeavesNothing(t *testing.T) {
	before := kernelIDs(t)
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
	during := kernelIDs(t)
	childProg := map[uint32]bool{}
	for _, id := range progs {
		if before.progs[id] || !during.progs[id] {
			t.Fatalf("program %d: before %v, during %v", id, before.progs[id], during.progs[id])
		}
		childProg[id] = true
	}
	for _, id := range maps {
		if before.maps[id] || !during.maps[id] {
			t.Fatalf("map %d: before %v, during %v", id, before.maps[id], during.maps[id])
		}
	}
	var links []uint32
	for id := range during.links {
		if !before.links[id] && childProg[during.linkProg[id]] {
			links = append(links, id)
		}
	}
	if len(progs) != 2 || len(maps) != 3 || len(links) == 0 {
		t.Fatalf("child made progs %v, maps %v, links %v", progs, maps, links)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// The kernel frees objects asynchronously (RCU); allow it a moment.
	var left []string
	for try := 0; try < 100; try++ {
		after := kernelIDs(t)
		left = nil
		for _, id := range progs {
			if after.progs[id] {
				left = append(left, fmt.Sprint("prog ", id))
			}
		}
		for _, id := range maps {
			if after.maps[id] {
				left = append(left, fmt.Sprint("map ", id))
			}
		}
		for _, id := range links {
			if after.links[id] {
				left = append(left, fmt.Sprint("link ", id))
			}
		}
		if len(left) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("left behind after SIGKILL: %v", left)
}
