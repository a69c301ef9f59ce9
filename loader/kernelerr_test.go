package loader

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/kfeature"
	"github.com/dtrace-go/dtrace/provider"
)

// TestCheckISA: v4 code meant for a v3 kernel is refused before the
// verifier sees it, in DTrace's words, naming the probe, the form, the
// source line and the kernel.
func TestCheckISA(t *testing.T) {
	p := &provider.Probe{Provider: "dtrace", Name: "BEGIN"}
	insns := asm.Instructions{
		asm.Mov.Imm(asm.R0, 0).WithSource(pos("line 1: BEGIN { x = (char)y; }")),
		asm.MovSX8.Reg(asm.R0, asm.R0),
		asm.Return(),
	}
	if err := checkISAFor(p, insns, kfeature.ISAv4); err != nil {
		t.Fatalf("v4 kernel: %v", err)
	}
	if err := checkISAFor(p, insns[:1], kfeature.ISAv3); err != nil {
		t.Fatalf("v3 code: %v", err)
	}
	err := checkISAFor(p, insns, kfeature.ISAv3)
	want := "failed to enable 'dtrace:::BEGIN': BPF instruction set v4 (sign-extending move) is not supported by kernel " +
		kfeature.Probe().Release + " (at line 1: BEGIN { x = (char)y; })"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	if !errors.Is(err, ebpf.ErrNotSupported) {
		t.Error("not ErrNotSupported")
	}
}

// TestVerifierErrorWording: a refusal names the probe, the kernel and
// the verifier's reason, not the whole log, and points at -S.
func TestVerifierErrorWording(t *testing.T) {
	p := &provider.Probe{Provider: "dtrace", Name: "BEGIN"}
	ve := &VerifierError{Probe: p, Source: "line 2: x", Log: []string{
		"0: (b7) r0 = 0", "1: (79) r0 = *(u64 *)(r3 +0)", "R3 !read_ok", "processed 2 insns (limit 1000000) max_states_per_insn 0", "",
	}, Err: errors.New("load program: permission denied")}
	got := ve.Error()
	for _, w := range []string{"failed to enable 'dtrace:::BEGIN'", "kernel " + kfeature.Probe().Release, "at line 2: x", ": R3 !read_ok", "-S shows the verifier log"} {
		if !strings.Contains(got, w) {
			t.Errorf("%q lacks %q", got, w)
		}
	}
	if strings.Contains(got, "processed") {
		t.Errorf("%q has the statistics line", got)
	}
	if m := unknownHelper().FindStringSubmatch("unknown func bpf_loop#181"); m == nil || m[1] != "bpf_loop" {
		t.Errorf("unknown helper: %v", m)
	}
}

// TestVerifierGaveUp: EFAULT from the verifier (the limit on pending
// branches; cilium/ebpf keeps no log then) is said in words a D
// programmer can act on, not as "bad address".
func TestVerifierGaveUp(t *testing.T) {
	p := &provider.Probe{Provider: "dtrace", Name: "BEGIN"}
	err := newVerifierError(p, nil, fmt.Errorf("load program: %w (hit verifier bug)", syscall.EFAULT))
	want := "failed to enable 'dtrace:::BEGIN': the BPF verifier of kernel " + kfeature.Probe().Release +
		" gave up on the program: too many paths to check; split the clause into smaller clauses"
	if err.Error() != want {
		t.Errorf("got  %q\nwant %q", err, want)
	}
}

func TestAttachErrorWording(t *testing.T) {
	p := &provider.Probe{Provider: "fbt", Function: "vfs_read", Name: "entry"}
	rel := kfeature.Probe().Release
	for _, c := range []struct {
		err  error
		want string
	}{
		{kfeature.Unsupported("fentry", errors.New("EPERM")), "failed to enable 'fbt::vfs_read:entry': fentry is not supported by kernel " + rel},
		{fmt.Errorf("attach fbt::vfs_read:entry: %w", kfeature.Unsupported("kprobes", nil)), "failed to enable 'fbt::vfs_read:entry': kprobes is not supported by kernel " + rel},
		{fmt.Errorf("x: %w", ebpf.ErrNotSupported), "failed to enable 'fbt::vfs_read:entry': not supported by kernel " + rel + ": x: not supported"},
		{errors.New("boom"), "failed to enable 'fbt::vfs_read:entry': boom"},
	} {
		if got := attachError(p, c.err).Error(); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
