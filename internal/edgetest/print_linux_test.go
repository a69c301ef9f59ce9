//go:build linux

package edgetest

import "testing"

// TestPrintVoidPointer: print() of a void pointer prints its type and
// value, as illumos prints a pointer (dt_print_ptr: "%#llx", so zero is
// "0"). A pointer to a sized object still prints the object, as
// dtrace-utils' print() does (the corpus's print/ tests).
func TestPrintVoidPointer(t *testing.T) {
	for _, c := range []struct{ name, prog, want string }{
		{"constant", `BEGIN { print((void *)0x1234); exit(0); }`, "void * 0x1234\n\n"},
		{"zero", `BEGIN { print((void *)0); exit(0); }`, "void * 0\n\n"},
		{"variable", `BEGIN { p = (void *)0xffff888812345678; print(p); exit(0); }`, "void * 0xffff888812345678\n\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, status := dtrace(t, "-qn", c.prog)
			if status != 0 || stdout != c.want {
				t.Errorf("status %d, stdout %q, want 0 and %q; stderr %q", status, stdout, c.want, stderr)
			}
		})
	}
}
