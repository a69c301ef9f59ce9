package codegen

import (
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/checktest"
)

// FuzzGenerate parses, checks and compiles arbitrary text: a program the
// checker accepts either compiles or fails with an error, never a panic
// (codegen recovers only its own bailouts).
func FuzzGenerate(f *testing.F) {
	for _, s := range []string{
		`BEGIN { x = 1; trace(x); printf("%d %s\n", pid, execname); exit(0); }`,
		`BEGIN { @a[probefunc, execname] = count(); @b = quantize(arg0); @c = lquantize(arg1, 0, 10, 2); printa(@a); trunc(@a, 2); clear(@b); }`,
		`BEGIN { s = strjoin("a", "b"); t = substr(s, 1, 2); u = strtok(s, "a"); trace(strlen(t)); trace(index(s, "b")); trace(rindex(s, "b", 1)); trace(strstr(s, "b")); trace(json(s, "a[1].b")); }`,
		`BEGIN { p = (char *)alloca(16); bcopy("abc", p, 4); trace(basename("/a/b")); trace(dirname("/a/b")); trace(cleanpath("/a/../b")); trace(lltostr(42)); }`,
		`BEGIN { trace(toupper("a")); trace(tolower("B")); trace(strtoll("0x1f", 16)); trace(strtoll("9")); trace(lltostr(8, 8)); print(1 + 2); tracemem(arg0, 8, arg1); }`,
		`BEGIN { trace(htons(1)); trace(ntohl(2)); trace(htonll(3)); trace(getmajor(7)); trace(getminor(7)); trace(rand()); trace(progenyof(1)); }`,
		`BEGIN { sym(arg0); func(arg0); mod(arg0); usym(arg0); ufunc(arg0); umod(arg0); uaddr(arg0); stack(); ustack(5); @s[stack(), ustack()] = count(); }`,
		`BEGIN { self->x = timestamp; this->y = vtimestamp; trace(self->x - this->y); trace(walltimestamp); trace(caller); trace(stackdepth); trace(errno); trace(curthread); }`,
		`BEGIN { i = speculation(); speculate(i); trace(1); } BEGIN { commit(1); discard(2); }`,
		`BEGIN { @x = sum(1); @y = avg(2); @z = stddev(3); @w = llquantize(4, 10, 0, 6, 20); tracemem(arg0, 4); setopt("quiet"); normalize(@x, 2); denormalize(@x); }`,
		`BEGIN { trace(inet_ntoa6((struct in6_addr *)alloca(16))); trace(copyinstr(arg0)); trace(copyinstr(arg0, 8)); p = copyin(arg0, 8); trace(*(int *)p); }`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if info := checktest.Check(src); info != nil {
			Generate(info, Options{})
		}
	})
}
