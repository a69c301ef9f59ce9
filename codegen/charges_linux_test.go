//go:build linux

package codegen

import (
	"testing"

	"github.com/dtrace-go/dtrace/program"
)

// TestCharges checks the sizes dtrace-utils sizes dynvarsize and aggsize
// by (dt_cg_arglist's tuple, dt_ident_set_storage's variable size,
// dt_aggid_add's data size).
func TestCharges(t *testing.T) {
	for _, c := range []struct {
		src  string
		want program.Charges
	}{
		// The corpus' err.dynvarsize-too-small: 4 + int + 8, an int.
		{`BEGIN { a[1] = 1; }`, program.Charges{Tuple: 16, DynVar: 4}},
		// drp.DTRACEDROP_DYNAMIC.local_only: no tuple.
		{`BEGIN { self->a = 1; self->b = 2; }`, program.Charges{DynVar: 4}},
		// A string item is strsize+1 bytes; a long after a char is
		// aligned to 8.
		{`BEGIN { a["x", (char)1, 2L] = 1L; }`, program.Charges{Tuple: 4 + 33 + 1 + 2 + 8 + 8, DynVar: 8}},
		// err.aggsize-too-small: no key (4 + 8), a count (8 + 8); the
		// tuple is the largest of aggregations and arrays alike.
		{`BEGIN { @ = count(); }`, program.Charges{Tuple: 12, AggData: 16}},
		{`BEGIN { @[1] = count(); x[1, 2] = 1; }`, program.Charges{Tuple: 20, DynVar: 4, AggData: 16}},
	} {
		spec := compileD(t, c.src, Options{StrSize: 32})
		if spec.Charged != c.want {
			t.Errorf("%s: charged %+v, want %+v", c.src, spec.Charged, c.want)
		}
	}
}
