//go:build linux

package codegen

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/dlang/ktypes"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// fakeOffsets stands in for the kernel's BTF: the unwinder's code only
// needs some offsets to be generated.
func fakeOffsets(s, m string) (uint32, error) { return uint32(8 * (len(s) + len(m))), nil }

// listing is a spec's maps and instructions as text.
func listing(s *program.Spec) string {
	var b strings.Builder
	for _, m := range s.Maps {
		fmt.Fprintln(&b, m.Name, m.Kind, m.KeySize, m.ValueSize, m.MaxEntries)
	}
	for _, c := range s.Clauses {
		fmt.Fprintln(&b, c.Insns)
	}
	for _, f := range s.Funcs {
		fmt.Fprintln(&b, f)
	}
	return b.String()
}

// TestUnwindPaysNothing: a program that takes no user stack is the same
// program with the CFI unwinder on or off (no maps, no code); one that
// does gets the unwinder's maps and functions.
func TestUnwindPaysNothing(t *testing.T) {
	on := Options{UStackCFI: true, MemberOffset: fakeOffsets}
	for _, src := range []string{
		`profile-997 { @[stack()] = count(); }`,
		`syscall::read:entry { @[execname, umod(arg0)] = count(); trace(stackdepth); }`,
		`BEGIN { printf("%d\n", 1); exit(0); }`,
	} {
		a, b := listing(compileD(t, src, on)), listing(compileD(t, src, Options{MemberOffset: fakeOffsets}))
		if a != b {
			t.Errorf("%s: the unwinder changed a program without ustack()", src)
		}
		if strings.Contains(a, "dt_uw") {
			t.Errorf("%s: unwinder maps or code in a program without ustack()", src)
		}
	}
	for _, src := range []string{
		`profile-997 { @[ustack()] = count(); }`, `BEGIN { ustack(3, 100); }`, `BEGIN { jstack(); }`,
		`BEGIN { trace(ucaller); }`, `BEGIN { trace(ustackdepth); }`,
	} {
		l := listing(compileD(t, src, on))
		for _, want := range []string{abi.MapUWFiles, abi.MapUWTables, abi.MapUWMiss, abi.MapUWVMAs, uwStepFunc, uwVMAFunc} {
			if !strings.Contains(l, want) {
				t.Errorf("%s: no %s", src, want)
			}
		}
		if strings.Contains(listing(compileD(t, src, Options{})), "dt_uw") {
			t.Errorf("%s: unwinder without UStackCFI", src)
		}
	}
}

// TestUnwindVerifies loads every form of the user stack with the
// running kernel's offsets and runs it in BEGIN: the verifier takes it,
// and the test process's own stack (Go keeps frame pointers) is walked.
func TestUnwindVerifies(t *testing.T) {
	raw, err := os.ReadFile("/sys/kernel/btf/vmlinux")
	if err != nil {
		t.Skip(err)
	}
	opts := Options{UStackCFI: true, MemberOffset: func(s, m string) (uint32, error) { return ktypes.MemberOffset(raw, s, m) }}
	out := runD(t, `BEGIN { trace(ustackdepth > 2); trace(ucaller != 0); ustack(3); ustack(2, 64); jstack(); @[ustack(4)] = count(); exit(0); }`, opts)
	if !strings.HasPrefix(out, "trace(1)\ntrace(1)\n") {
		t.Errorf("ustackdepth > 2 and ucaller != 0 in BEGIN: %s", out)
	}
}
