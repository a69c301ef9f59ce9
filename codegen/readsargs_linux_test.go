//go:build linux

package codegen

import "testing"

// TestReadsArgs checks which clauses say they read their probe's
// arguments: the loader leaves the arguments out of the prologue of a
// probe none of whose clauses does (a wide system call probe then skips
// reading the saved registers), so a clause that reads one and does not
// say so would see stale values.
func TestReadsArgs(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{`syscall::getppid:entry { @[execname] = count(); }`, false},
		{`syscall:::entry { @[probefunc] = count(); }`, false},
		{`syscall::read:entry /pid == 1234/ { printf("%d %s\n", tid, probefunc); }`, false},
		{`syscall::read:entry { trace(arg0); }`, true},
		{`syscall::read:entry /arg2 > 100/ { trace(pid); }`, true},
		{`syscall::open:entry { printf("%s\n", copyinstr(arg0)); }`, true},
		{`syscall::read:entry { self->fd = arg9; }`, true},
		{`syscall::read:entry { @[probefunc] = quantize(arg2); }`, true},
	} {
		spec := compileD(t, tc.src, Options{})
		if got := spec.Clauses[0].ReadsArgs; got != tc.want {
			t.Errorf("%s: ReadsArgs %v, want %v", tc.src, got, tc.want)
		}
	}
}
