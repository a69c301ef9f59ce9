package check_test

import (
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/checktest"
)

// FuzzCheck parses and checks arbitrary text: neither may panic.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`BEGIN { x = 1; trace(x); }`,
		`struct s { int a : 3; char b[4]; } v; BEGIN { v.a = 1; trace(v.b[1]); }`,
		`BEGIN { @a[1, "x"] = lquantize(arg0, 0, 10, 2); printa("%d %s %@d\n", @a); }`,
		`enum e { A = 1 << 3, B }; inline int N = B * 2; BEGIN /N > 1/ { trace(N); }`,
		`BEGIN { self->x[1] = timestamp; this->y = (char *)alloca(8); trace(self->x[1]); }`,
		`translator struct o < int *p > { a = *p; }; struct o { int a; };`,
		`#pragma D option quiet
BEGIN { printf("%s %d\n", execname, pid); speculate(1); exit(0); }`,
		`BEGIN { x = 1 / 0; y = sizeof (struct nope); z = offsetof(int, a); }`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checktest.Check(src, "1", "x")
	})
}
