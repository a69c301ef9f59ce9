//go:build linux

package codegen

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/dlang/ktypes"
)

// TestNarrowKeys checks the widths of string aggregation key items and
// that an execname key holds exactly what bpf_get_current_comm gives,
// whether it is read by the helper or from the task through BTF.
func TestNarrowKeys(t *testing.T) {
	src := `string s;
BEGIN { s = "x"; @a[execname] = count(); @b[execname, "lit"] = count(); @c[s] = count();
  @d[probefunc] = count(); @d["a literal longer than any probe name part, which is sixty-four bytes"] = count();
  @e[execname, pid] = count(); @e["abc", 1] = count(); }`
	spec := compileD(t, src, Options{})
	widths := map[string][]uint32{}
	for _, a := range spec.Aggs {
		for _, k := range a.Keys {
			widths[a.Name] = append(widths[a.Name], k.Size)
		}
	}
	full := uint32(256 + 2) // strBuf of the default strsize, rounded to 8
	full = (full + 7) &^ 7
	want := map[string][]uint32{"a": {16}, "b": {16, 8}, "c": {full}, "d": {72}, "e": {16, 8}}
	for name, w := range want {
		if !equalU32(widths[name], w) {
			t.Errorf("@%s key widths %v, want %v", name, widths[name], w)
		}
	}

	needBPF(t)
	raw, err := os.ReadFile("/sys/kernel/btf/vmlinux")
	if err != nil {
		t.Skipf("no kernel BTF: %v", err)
	}
	testMemberOffset := func(s, m string) (uint32, error) { return ktypes.MemberOffset(raw, s, m) }
	// loadSpec locks the test to its OS thread; the test runs fire there.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	comm, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/comm", unix.Gettid()))
	if err != nil {
		t.Fatal(err)
	}
	wantKey := make([]byte, 16)
	copy(wantKey, bytes.TrimSuffix(comm, []byte("\n")))
	for _, btfRead := range []bool{false, true} {
		opts := Options{}
		if btfRead {
			opts.MemberOffset = testMemberOffset
		}
		spec := compileD(t, `BEGIN { @a[execname] = count(); }`, opts)
		r := loadSpec(t, spec)
		r.fire(t)
		r.fire(t)
		n := 0
		for _, e := range aggEntries(t, r, spec.Aggs[0]) {
			n++
			if !bytes.Equal(e.key, wantKey) {
				t.Errorf("btf=%v: key %q, want %q", btfRead, e.key, wantKey)
			}
		}
		if n != 1 {
			t.Errorf("btf=%v: %d keys, want 1", btfRead, n)
		}
	}
}

func equalU32(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
