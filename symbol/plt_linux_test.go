package symbol_test

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/symbol"
)

// TestPLTStubs: every stub objdump names name@plt in names (built as
// distributions build C, then stripped), lazy-binding .plt and
// .plt.got alike, is named the same by Lookup, at its first byte and
// its last; the byte before the first stub (PLT0, the resolver's
// trampoline) and the functions keep their own names or none.
func TestPLTStubs(t *testing.T) {
	prog := testprog.BuildNames(t, "", "-O2", "-fomit-frame-pointer", "-Wl,--build-id")
	testprog.SplitDebug(t, prog, false)
	out, err := exec.Command("objdump", "-d", prog).Output()
	if err != nil {
		t.Skipf("objdump: %v", err)
	}
	o, err := symbol.OpenObject(prog)
	if err != nil {
		t.Fatal(err)
	}
	stubs := regexp.MustCompile(`(?m)^([0-9a-f]+) <([^>]+@plt)>:$`).FindAllStringSubmatch(string(out), -1)
	if len(stubs) < 2 {
		t.Fatalf("objdump names %d stubs in\n%s", len(stubs), out)
	}
	for _, m := range stubs {
		at, _ := strconv.ParseUint(m[1], 16, 64)
		for _, a := range []uint64{at, at + 7} {
			fn, ok := o.Lookup(a)
			if !ok || fn.Name != m[2] || fn.Value != at {
				t.Errorf("Lookup(%#x) = %+v %v, want %s at %#x", a, fn, ok, m[2], at)
			}
		}
	}
	first, _ := strconv.ParseUint(stubs[0][1], 16, 64)
	if fn, ok := o.Lookup(first - 1); ok && strings.HasSuffix(fn.Name, "@plt") {
		t.Errorf("PLT0 named %s", fn.Name)
	}
	for _, fn := range o.Funcs() {
		if strings.HasSuffix(fn.Name, "@plt") {
			t.Errorf("stub %s listed as a function", fn.Name)
		}
	}
}
