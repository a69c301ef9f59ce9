//go:build linux

package edgetest

import "testing"

// TestStoreThroughCast: a cast to a pointer type may be stored through,
// as illumos allows (its cast marks a pointer result writable); the
// store lands in scratch memory, and one to memory D may not write
// faults when it runs.
func TestStoreThroughCast(t *testing.T) {
	for _, c := range []struct{ name, prog, want string }{
		{"alloca", `BEGIN { *((int *)alloca(4)) = 1; printf("stored\n"); exit(0); }`, "stored\n\n"},
		{"read back", `BEGIN { this->p = alloca(8); *((int *)this->p) = 7; *((short *)this->p + 2) = 9;
			printf("%d %d\n", *(int *)this->p, ((short *)this->p)[2]); exit(0); }`, "7 9\n\n"},
		{"compound", `BEGIN { this->p = (long *)alloca(8); *this->p = 4; *((long *)this->p) += 3; printf("%d\n", *this->p); exit(0); }`, "7\n\n"},
		{"not scratch", `BEGIN { *(int *)0x1000 = 1; } ERROR { printf("fault %d at %x\n", arg4, arg5); exit(0); }`, "fault 1 at 1000\n\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, status := dtrace(t, "-qn", c.prog)
			if status != 0 || stdout != c.want {
				t.Errorf("status %d, stdout %q, want 0 and %q; stderr %q", status, stdout, c.want, stderr)
			}
		})
	}
}
