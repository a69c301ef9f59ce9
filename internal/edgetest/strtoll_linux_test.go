//go:build linux

package edgetest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestStrtollMany: strtoll() with every base from 2 to 36 in one clause
// loads and gives illumos's values. Each call used to cost the verifier
// a walk of its own 256-turn loop; twenty in one BEGIN made 6.18's
// verifier give up ("bad address (hit verifier bug...)").
func TestStrtollMany(t *testing.T) {
	var prog, want strings.Builder
	prog.WriteString("BEGIN {\n")
	for base := 2; base <= 36; base++ {
		v := int64(1234567)*int64(base) + int64(base)
		s := strconv.FormatInt(v, base)
		switch {
		case base == 16:
			s = "0x" + s
		case base%3 == 0:
			s, v = "  -"+s, -v
		case base%3 == 1:
			s = "\t+" + strings.ToUpper(s) + "!"
		}
		fmt.Fprintf(&prog, "\tprintf(\"%%d\\n\", strtoll(%q, %d));\n", s, base)
		fmt.Fprintf(&want, "%d\n", v)
	}
	prog.WriteString("\texit(0);\n}\n")
	want.WriteString("\n")
	stdout, stderr, status := dtrace(t, "-qn", prog.String())
	if status != 0 || stdout != want.String() {
		t.Errorf("status %d, stdout %q, want 0 and %q; stderr %q\nprogram:\n%s", status, stdout, want.String(), stderr, prog.String())
	}
}
