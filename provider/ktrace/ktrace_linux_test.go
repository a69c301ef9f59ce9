package ktrace_test

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/ktrace"
)

// TestMissingTracepoints: probes whose tracepoints the kernel lacks are
// not listed; a probe keeps those of its tracepoints that exist.
func TestMissingTracepoints(t *testing.T) {
	testprog.NeedRoot(t, "tracefs")
	pv := ktrace.New("test", []ktrace.Spec{
		{Name: "there", Sources: []ktrace.Source{{Group: "sched", Name: "sched_switch"}, {Group: "sched", Name: "no_such_tracepoint"}}},
		{Name: "gone", Sources: []ktrace.Source{{Group: "sched", Name: "no_such_tracepoint"}}},
		{Name: "event", Kind: ktrace.Event, Sources: []ktrace.Source{{Group: "sched", Name: "sched_switch"}}},
		{Name: "no-event", Kind: ktrace.Event, Sources: []ktrace.Source{{Group: "sched", Name: "no_such_event"}}},
	})
	ps, err := pv.Probes(provider.Desc{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	if len(names) != 2 || names[0] != "there" || names[1] != "event" {
		t.Errorf("probes %v, want [there event]", names)
	}
	if ps, _ := pv.Probes(provider.Desc{Name: "there"}); len(ps) != 1 {
		t.Fatalf("%d probes named there", len(ps))
	}
}

// TestBareTracepointMissing: a bare tracepoint is listed without looking,
// and attaching to one the kernel lacks fails with the kernel's word.
func TestBareTracepointMissing(t *testing.T) {
	testprog.NeedRoot(t, "BPF")
	pv := ktrace.New("test", []ktrace.Spec{{Name: "bare", Sources: []ktrace.Source{{Name: "no_such_bare_tp", Bare: true}}}})
	ps, err := pv.Probes(provider.Desc{})
	if err != nil || len(ps) != 1 {
		t.Fatalf("probes %v, %v", ps, err)
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.RawTracepoint, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if c, err := pv.Attach(ps[0], prog); err == nil {
		c.Close()
		t.Fatal("attached to a tracepoint that does not exist")
	} else if !strings.Contains(err.Error(), "no_such_bare_tp") {
		t.Errorf("error %q does not name the tracepoint", err)
	}
}

// TestOffset checks member offsets against the kernel's BTF, nested and
// anonymous members included.
func TestOffset(t *testing.T) {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		t.Skip("no kernel BTF:", err)
	}
	var task *btf.Struct
	if err := spec.TypeByName("task_struct", &task); err != nil {
		t.Fatal(err)
	}
	var want uint32
	for _, m := range task.Members {
		if m.Name == "exit_code" {
			want = m.Offset.Bytes()
		}
	}
	off, size, err := ktrace.Offset("task_struct", "exit_code")
	if err != nil || uint32(off) != want || size != 4 {
		t.Errorf("exit_code: %d, %d, %v; want offset %d size 4", off, size, err, want)
	}
	if off, size, err := ktrace.Offset("k_sigaction", "sa.sa_handler"); err != nil || off != 0 || size != 8 {
		t.Errorf("sa.sa_handler: %d, %d, %v", off, size, err)
	}
	if _, _, err := ktrace.Offset("task_struct", "no_such_member"); err == nil {
		t.Error("no error for a missing member")
	}
	if offs, err := ktrace.Offsets("task_struct.exit_code", "k_sigaction.sa.sa_handler"); err != nil || len(offs) != 2 || uint32(offs[0]) != want || offs[1] != 0 {
		t.Errorf("Offsets: %v, %v; want [%d 0]", offs, err, want)
	}
	if _, err := ktrace.Offsets("task_struct.exit_code", "task_struct.no_such_member"); err == nil {
		t.Error("Offsets: no error for a missing member")
	}
}
