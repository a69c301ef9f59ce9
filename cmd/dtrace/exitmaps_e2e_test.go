//go:build linux

package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// workSource calls work() as many times as its argument says and exits
// at once.
const workSource = `#include <stdlib.h>
__attribute__((noinline)) int work(int i) { return i * 2; }
int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 0;
	int s = 0;
	for (long i = 0; i < n; i++)
		s += work(i);
	return s & 1;
}
`

// TestUstackShortTarget: a -c target that maps libc and exits within
// milliseconds still has its libc frames named in @[ustack()] at its
// entry probe (its mappings are read at its exit), after its own work
// and main: no frame is a bare address.
func TestUstackShortTarget(t *testing.T) {
	bin := buildDtrace(t)
	prog := testprog.BuildSource(t, "prog", workSource, "-O0", "-fno-omit-frame-pointer")
	libc := regexp.MustCompile("^libc\\.so\\.6`[A-Za-z_]\\w*\\+0x[0-9a-f]+$")
	bare := regexp.MustCompile("^0x[0-9a-f]+$")
	for range 3 {
		out, errs := runTraced(t, bin, prog, 100, "-q", "-n", `pid$target:a.out:work:entry { @[ustack()] = count(); }`)
		var frames []string
		for _, l := range strings.Split(out, "\n") {
			if l = strings.TrimSpace(l); l != "" && l != "100" {
				frames = append(frames, l)
			}
		}
		named := false
		for _, f := range frames {
			named = named || libc.MatchString(f)
			if bare.MatchString(f) {
				t.Errorf("bare frame %s:\n%s", f, out)
			}
		}
		if len(frames) < 3 || frames[0] != "prog`work" || !strings.HasPrefix(frames[1], "prog`main+0x") || !named {
			t.Errorf("want prog`work, prog`main and a named libc.so.6 frame:\n%s%s", out, errs)
		}
	}
}
