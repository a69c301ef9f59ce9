package ktrace_test

import (
	"os"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/ktrace"
)

// TestMissingTracepoints: probes whose tracepoints the kernel lacks are
// not listed; a probe keeps those of its tracepoints that exist.
func TestMissingTracepoints(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root for tracefs")
	}
	pv := ktrace.New("test", []ktrace.Spec{
		{Name: "there", Sources: []ktrace.Source{{Name: "sched_switch"}, {Name: "no_such_tracepoint"}}},
		{Name: "gone", Sources: []ktrace.Source{{Name: "no_such_tracepoint"}}},
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
}
