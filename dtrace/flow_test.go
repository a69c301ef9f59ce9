package dtrace

import (
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/abi"
)

// loadedFlow loads src and returns the names of the maps created and the
// number of probes with a program attached.
func loadedFlow(t *testing.T, src string) (maps []string, probes int) {
	t.Helper()
	h := openTest(t, Config{Testing: true})
	startTest(t, h, "t", src)
	for _, m := range []string{abi.MapFlow, abi.MapFlowData, abi.MapFlowPos, abi.MapTVars} {
		if h.objs.Map(m) != nil {
			maps = append(maps, m)
		}
	}
	return maps, len(h.objs.Plan().Probes)
}

// A program without flow-> or flowid loads no flow map and no program on
// a probe it does not name: flow variables cost it nothing. One that uses
// them gets the maps and the transports' probes.
func TestFlowZeroCost(t *testing.T) {
	maps, probes := loadedFlow(t, `syscall::getppid:entry { self->x = 1; @ = count(); }`)
	if strings.Join(maps, " ") != abi.MapTVars || probes != 1 {
		t.Errorf("without flow->: maps %v, %d probes; want only %s and 1 probe", maps, probes, abi.MapTVars)
	}
	maps, probes = loadedFlow(t, `syscall::getppid:entry { flow->x = 1; }`)
	if len(maps) != 4 || probes < 8 {
		t.Errorf("with flow->: maps %v, %d probes; want the flow maps and the transports' probes", maps, probes)
	}
	maps, _ = loadedFlow(t, `syscall::getppid:entry { trace(flowid); }`)
	if len(maps) != 4 {
		t.Errorf("with flowid: maps %v, want the flow maps", maps)
	}
}

// usesFlow finds flow-> and flowid anywhere in a program, and nothing
// else named flow.
func TestUsesFlow(t *testing.T) {
	for src, want := range map[string]bool{
		`BEGIN { flow->x = 1; }`:                      true,
		`BEGIN /flow->x/ { }`:                         true,
		`BEGIN { @[flowid] = count(); }`:              true,
		`BEGIN { flow = 1; trace(flow); }`:            false,
		`BEGIN { self->flow = 1; this->flowid = 2; }`: false,
		`BEGIN { trace(curthread->flowid); }`:         false,
	} {
		h := openTest(t, Config{Testing: true})
		p, err := h.parse(Source{Name: "t", Text: src})
		if err != nil {
			t.Fatal(err)
		}
		if got := usesFlow(p); got != want {
			t.Errorf("usesFlow(%q) = %v, want %v", src, got, want)
		}
	}
}
