//go:build linux

package codegen

import (
	"testing"

	"github.com/dtrace-go/dtrace/internal/abi"
)

func TestSpeculationIDs(t *testing.T) {
	needBPF(t)
	spec := compileD(t, `BEGIN { a = speculation(); b = speculation(); printf("%d %d\n", a, b); } BEGIN { commit(a); }`, Options{NSpec: 1})
	r := loadSpec(t, spec)
	out := render(t, spec, r.fire(t))
	var v [16]byte
	for k := uint32(0); k < 2; k++ {
		if err := r.maps[abi.MapSpec].Lookup(k, &v); err != nil {
			t.Fatal(err)
		}
		t.Logf("slot %d: %x", k, v)
	}
	if want := "1 0\naction15\n"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
}
