//go:build linux

package codegen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/internal/kfeature"
	"github.com/dtrace-go/dtrace/program"
)

// compileD runs the front end and the generator on src, for the running
// kernel's instruction set unless opts names one.
func compileD(t testing.TB, src string, opts Options) *program.Spec {
	t.Helper()
	if opts.ISA == 0 {
		opts.ISA = kfeature.Probe().CodegenISA()
	}
	fset := syntax.NewFileSet()
	prog, err := syntax.Parse(fset, "test.d", []byte(src), 0)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	info, err := check.Check(fset, []*syntax.Program{prog}, &check.Config{})
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	spec, err := Generate(info, opts)
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	return spec
}

// runD compiles src, fires BEGIN once and renders the records.
func runD(t testing.TB, src string, opts Options) string {
	t.Helper()
	spec := compileD(t, src, opts)
	return render(t, spec, loadSpec(t, spec).fire(t))
}

// render decodes records into text the way a consumer would, in a
// compact form: printf output as formatted, other items as name(value).
func render(t testing.TB, spec *program.Spec, recs [][]byte) string {
	t.Helper()
	var b strings.Builder
	for _, rec := range recs {
		epid := u32(rec, abi.HdrEPID)
		if epid == abi.EPIDFault {
			fmt.Fprintf(&b, "fault(clause %d, probe %d, code %d, illval %#x)\n", u32(rec, abi.FaultRecClause), u32(rec, abi.FaultRecProbe), u64(rec, abi.FaultRecCode), u64(rec, abi.FaultRecIllval))
			continue
		}
		var cs *program.ClauseSpec
		for _, c := range spec.Clauses {
			if c.EPID == epid {
				cs = c
			}
		}
		if cs == nil {
			t.Fatalf("record with unknown EPID %d", epid)
		}
		seg := cs.Segments[u32(rec, abi.HdrSegment)]
		items := seg.Records
		for i := 0; i < len(items); i++ {
			it := items[i]
			switch it.Action {
			case program.ActPrintf:
				f, err := format.Parse(spec.Formats[it.FormatID])
				if err != nil {
					t.Fatal(err)
				}
				var args []program.Value
				for _, a := range items[i+1 : i+1+it.NArgs] {
					args = append(args, value(rec, a))
				}
				i += it.NArgs
				if err := f.Print(&b, args); err != nil {
					t.Fatal(err)
				}
			case program.ActTrace:
				fmt.Fprintf(&b, "trace(%v)\n", show(value(rec, it)))
			case program.ActExit:
				fmt.Fprintf(&b, "exit(%d)\n", itemValue(rec, it))
			default:
				fmt.Fprintf(&b, "action%d", it.Action)
				for _, a := range items[i+1 : i+1+it.NArgs] {
					fmt.Fprintf(&b, " %v", show(value(rec, a)))
				}
				i += it.NArgs
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

func value(rec []byte, it program.Record) program.Value {
	switch it.Kind {
	case program.KindString:
		return program.String(itemString(rec, it))
	case program.KindSigned, program.KindUnsigned:
		return program.Int{Bits: uint64(itemValue(rec, it)), Size: int(it.Size), Signed: it.Kind == program.KindSigned}
	}
	return program.Bytes{Data: rec[it.Offset : it.Offset+it.Size]}
}

func show(v program.Value) string {
	switch v := v.(type) {
	case program.String:
		return fmt.Sprintf("%q", string(v))
	case program.Int:
		if v.Signed {
			return fmt.Sprint(int64(v.Bits))
		}
		return fmt.Sprint(v.Bits)
	}
	return fmt.Sprint(v)
}

var e2eTests = []struct {
	name  string
	src   string
	args  []uint64
	fires int
	want  string
}{
	{name: "trace", src: `BEGIN { trace(1 + 2); trace("hi"); trace((char)300); }`,
		want: "trace(3)\ntrace(\"hi\")\ntrace(44)\n"},
	{name: "printf", src: `BEGIN { printf("%d %s %x|\n", -5, "str", 255); }`,
		want: "-5 str ff|\n"},
	{name: "args", args: []uint64{7, 1 << 40}, src: `BEGIN { printf("%d %d\n", arg0 * 3, arg1 >> 40); }`,
		want: "21 1\n"},
	{name: "globals", fires: 3, src: `int n, x; BEGIN { n++; x += 10; printf("%d %d\n", n, x); }`,
		want: "1 10\n2 20\n3 30\n"},
	{name: "predicate", fires: 4, src: `BEGIN /i++ & 1/ { printf("odd %d\n", i); }`,
		want: "odd 2\nodd 4\n"},
	{name: "if-else", fires: 3, src: `BEGIN { i++; if (i == 2) { printf("two\n"); } else { printf("not %d\n", i); } }`,
		want: "not 1\ntwo\nnot 3\n"},
	{name: "ternary-logic", src: `BEGIN { a = 0; printf("%d %d %d %d\n", a ? 1 : 2, a || 3, a && (1/a), 1 ^^ 1); }`,
		want: "2 1 0 0\n"},
	{name: "strings", src: `BEGIN { s = "abc"; t = strjoin(s, "def"); printf("%s %d %d %d\n", t, strlen(t), s == "abc", s < "abd"); }`,
		want: "abcdef 6 1 1\n"},
	{name: "inline with parameters", src: `inline int sq[int x] = x * x + 1; BEGIN { printf("%d %d\n", sq[7], sq[sq[2]]); }`,
		want: "50 26\n"},
	{name: "this", src: `BEGIN { this->x = 5; this->s = "q"; printf("%d %s\n", this->x * 2, this->s); }`,
		want: "10 q\n"},
	{name: "self", fires: 2, src: `self int n; BEGIN { self->n += 2; printf("%d\n", self->n); }`,
		want: "2\n4\n"},
	{name: "self-delete", fires: 2, src: `self int n; BEGIN { printf("%d\n", self->n); self->n = self->n ? 0 : 9; }`,
		want: "0\n9\n"},
	{name: "assoc", fires: 2, src: `int a[string, int]; BEGIN { a["x", 1]++; a["y", 2] += 5; printf("%d %d %d\n", a["x", 1], a["y", 2], a["x", 2]); }`,
		want: "1 5 0\n2 10 0\n"},
	{name: "assoc-string-value", src: `BEGIN { names[1] = "one"; names[2] = "two"; printf("%s %s %d\n", names[2], names[1], names[3] == NULL); }`,
		want: "two one 1\n"},
	{name: "divzero", src: `BEGIN { x = 0; printf("before\n"); y = 1 / x; printf("never\n"); } BEGIN { printf("next clause\n"); }`,
		want: "fault(clause 0, probe 1, code 4, illval 0x0)\nnext clause\n"},
	{name: "badaddr", src: `BEGIN { trace(*(int *)8); }`,
		want: "fault(clause 0, probe 1, code 1, illval 0x8)\n"},
	{name: "exit", src: `BEGIN { exit(3); }`,
		want: "exit(3)\n"},
	{name: "lltostr-case", src: `BEGIN { printf("%s %s %s\n", lltostr(-1234), lltostr(0), lltostr(-9223372036854775807 - 1)); }`,
		want: "-1234 0 -9223372036854775808\n"},
	{name: "strchr-substr", src: `BEGIN { str = "fooeyfooeyfoo"; printf("[%s] [%s] %d %d\n", strchr(str, 'y'), strrchr(str, 'y'), strchr(str, 'z') == NULL, strchr(str, 'a') != NULL);
printf("[%s] [%s] [%s] [%s] [%s] [%s]\n", substr("foobarbazbop", 3), substr("foobarbazbop", -10), substr("foobarbazbop", 300), substr("foobarbazbop", 4, 4), substr("foobarbazbop", 8, 20), substr("foobarbazbop", -3, -1)); }`,
		want: "[yfooeyfoo] [yfoo] 1 0\n[barbazbop] [obarbazbop] [] [arba] [zbop] [bo]\n"},
	{name: "assoc-struct", src: `struct { int index; string s; } command[int]; BEGIN { command[1].index = 7; command[1].s = "hey"; command[2].index = 9; printf("%d %s %d %d\n", command[1].index, command[1].s, command[2].index, command[3].index); }`,
		want: "7 hey 9 0\n"},
	{name: "alloca", src: `struct foo { int a; char b; int c; } *ptr; BEGIN { s = (char *)alloca(10); s[1] = 65; *s = 66; ptr = alloca(sizeof(struct foo)); ptr->c = 0x42; ptr->a = 7;
bcopy(s + 1, s + 2, 1); printf("%d %d %d %d %d\n", s[1], *s, ptr->c, ptr->a, s[2]); }`,
		want: "65 66 66 7 65\n"},
	{name: "store-bad-pointer", src: `int *p; BEGIN { p = (int *)64; *p = 1; }`,
		want: "fault(clause 0, probe 1, code 1, illval 0x40)\n"},
	{name: "store-through-pointers", src: `int a[3]; int *p; struct s { int x; long y; } g; struct s sa[2];
BEGIN { p = &a[0]; p[1] = 7; *(p + 2) = 9; a[0] = 3; q = &g.y; *q = 42; g.x = -1; r = &sa[1]; r->y = 5; (*r).x = 6;
printf("%d %d %d %d %d %d %d %d %d %d %d\n", a[0], a[1], a[2], *p, p[2], g.x, g.y, (int)(&a[2] - p), sa[1].y, sa[1].x, sa[0].y); }`,
		want: "3 7 9 3 9 -1 42 2 5 6 0\n"},
	{name: "store-through-clause-local", src: `struct s { int a; int b; }; this struct s t; BEGIN { this->t.b = 1; p = &this->t.a; *p = 3; p[1] += 5; printf("%d %d\n", this->t.a, this->t.b); }`,
		want: "3 6\n"},
	{name: "chained-pointer-stores", src: `BEGIN { d = (char *)alloca(9); d[0] = d[1] = d[2] = d[3] = d[4] = d[5] = d[6] = d[7] = d[8] = 'x'; d[8] = 0; n = 2; d[n++] = d[n++] + 1; printf("%s %d\n", stringof(d), n); }`,
		want: "xxxyxxxx 4\n"},
	{name: "null-arrow", src: `struct foo { int a; int c; }; BEGIN { p = (struct foo *)0; trace(p->c); } BEGIN { q = (struct foo *)0; q->c = 1; }`,
		want: "fault(clause 0, probe 1, code 1, illval 0x0)\nfault(clause 1, probe 1, code 1, illval 0x0)\n"},
	{name: "long-or-chain", src: `BEGIN { a = 1; b = 2; printf("%d %d\n", a == 0 || a == 2 || a == 3 || a == 4 || a == 5 || a == 6 || a == 7 || a == 8 || a == 9 || b == 2,
a == 1 && b == 2 && a != 3 && b != 4 && a != 5 && b != 6 && a != 7 && b != 8 && a != 9 && b == 3); }`,
		want: "1 0\n"},
	{name: "basename", src: `BEGIN { printf("[%s] [%s] [%s] [%s] [%s] [%s] [%s]\n", basename("/foo/bar/baz"), basename("/foo/bar///"), basename("baz"), basename(""), basename("///"), basename("/x"), basename("a/b")); }`,
		want: "[baz] [bar] [baz] [.] [/] [x] [b]\n"},
	{name: "dirname", src: `BEGIN { printf("[%s] [%s] [%s] [%s] [%s] [%s] [%s]\n", dirname("/foo/bar/baz"), dirname("/foo/bar///"), dirname("baz"), dirname(""), dirname("///"), dirname("/x"), dirname("a//b")); }`,
		want: "[/foo/bar] [/foo] [.] [.] [/] [/] [a]\n"},
	{name: "strtok", src: `BEGIN { a = strtok("  foo bar,,baz ", " ,"); b = strtok(NULL, " ,"); c = strtok(NULL, " ,"); printf("[%s] [%s] [%s] %d\n", a, b, c, strtok(NULL, " ,") == NULL); }`,
		want: "[foo] [bar] [baz] 1\n"},
	{name: "byte-order-dev", src: `BEGIN { printf("%x %x %x %x %x\n", htons(0x1234), htonl(0x12345678), htonll(0x0102030405060708), getmajor(0xabcdef0123456789ll), getminor(0x800005)); }`,
		want: "3412 78563412 807060504030201 234 5\n"},
	{name: "index", src: `BEGIN { printf("%d %d %d\n", index("foobarbaz", "barbaz"), rindex("foofoofoo", "foo"), index("foobar", "")); }`,
		want: "3 6 0\n"},
	{name: "strstr", src: `BEGIN { printf("[%s]\n", strstr("abcabc", "ca")); }`,
		want: "[cabc]\n"},
	{name: "null-strings", src: `self string t; BEGIN { s = "x"; s = NULL; printf("%d %d\n", s == NULL, self->t == NULL); s = "y"; printf("%d %s\n", s == NULL, s); c = s[1]; } BEGIN { x = s; x = NULL; c = x[2]; }
BEGIN { printf("recorded\n"); trace(self->t); } BEGIN { printf("%s\n", strchr("abc", 'z')); } BEGIN { s = NULL; trace(strlen(s)); }`,
		want: "1 1\n0 y\nfault(clause 1, probe 1, code 1, illval 0x2)\nfault(clause 2, probe 1, code 1, illval 0x0)\nfault(clause 3, probe 1, code 1, illval 0x0)\nfault(clause 4, probe 1, code 1, illval 0x0)\n"},
	{name: "self-struct", fires: 2, src: `struct p { int x; long y; }; self struct p s; BEGIN { self->s.x += 2; self->s.y = self->s.x * 10; printf("%d %d\n", self->s.x, self->s.y); }`,
		want: "2 20\n4 40\n"},
	{name: "string-compare-vars", src: `BEGIN { a = "abc"; b = "abd"; printf("%d %d %d\n", a == b, a != b, b > a); }`,
		want: "0 1 1\n"},
	{name: "struct-members", src: `struct s { int a; char b; long c : 12; unsigned d : 3; int arr[4]; } g; this struct s t;
BEGIN { g.a = 5; g.b = -1; g.c = -7; g.d = 9; g.arr[2] = 40; g.arr[1] += 2; this->t.a = g.a * 2;
printf("%d %d %d %d %d %d %d %d\n", g.a, g.b, g.c, g.d, g.arr[2], g.arr[1], g.arr[0], this->t.a); }`,
		want: "5 -1 -7 1 40 2 0 10\n"},
	{name: "array-bounds", src: `int a[3]; BEGIN { i = 3; a[i] = 1; }`,
		want: "fault(clause 0, probe 1, code 11, illval 0x3)\n"},
	{name: "casts-and-sizeof", src: `BEGIN { printf("%d %d %d %u\n", sizeof(int), (int)0x1ffffffff, (short)-1, (unsigned char)-1); }`,
		want: "4 -1 -1 255\n"},
}

func TestEndToEnd(t *testing.T) {
	needBPF(t)
	for _, tt := range e2eTests {
		t.Run(tt.name, func(t *testing.T) {
			spec := compileD(t, tt.src, Options{})
			r := loadSpec(t, spec)
			fires := max(tt.fires, 1)
			var out string
			for i := 0; i < fires; i++ {
				out += render(t, spec, r.fire(t, tt.args...))
			}
			if out != tt.want {
				t.Errorf("got\n%s\nwant\n%s", out, tt.want)
			}
		})
	}
}

// TestErrorClause checks that a fault runs the ERROR clauses with
// DTrace's arguments and that later clauses still run.
func TestErrorClause(t *testing.T) {
	needBPF(t)
	out := runD(t, `
ERROR { printf("error %d %d %d %d\n", arg1, arg2, arg4, arg5); }
BEGIN { x = 0; y = 10 / x; }
BEGIN { trace(*(int *)16); }
BEGIN { printf("after\n"); }`, Options{})
	want := "error 0 0 0 0\n" + // the wrapper's direct call of clause 0
		"fault(clause 1, probe 1, code 4, illval 0x0)\nerror 1 1 4 0\n" +
		"fault(clause 2, probe 1, code 1, illval 0x10)\nerror 1 2 1 16\n" +
		"after\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// TestPointerStoreFaults checks that stores through pointers outside
// the memory a D program owns, and misaligned accesses, fault with
// DTrace's codes (the addresses are kernel addresses, so only the code
// is compared).
func TestPointerStoreFaults(t *testing.T) {
	needBPF(t)
	for _, tt := range []struct {
		name, src string
		code      uint64
	}{
		{"alloca-overrun", `BEGIN { x = (int *)alloca(sizeof(int)); y = x + 2; *y = 3; }`, abi.FltBadAddr},
		{"alloca-underrun", `BEGIN { x = (int *)alloca(sizeof(int)); y = x - 2; *y = 3; }`, abi.FltBadAddr},
		{"past-globals", `int a[2]; BEGIN { p = &a[0]; p[100] = 1; }`, abi.FltBadAddr},
		{"kernel-address", `BEGIN { p = (long *)curthread; *p = 1; }`, abi.FltBadAddr},
		{"misaligned-load", `int a[3]; BEGIN { p = (int *)((uintptr_t)&a[0] + 2); trace(*p); }`, abi.FltBadAlign},
		{"misaligned-store", `int a[3]; BEGIN { p = (int *)((uintptr_t)&a[0] + 2); *p = 1; }`, abi.FltBadAlign},
		{"bad-before-misaligned", `int a[3]; BEGIN { p = (int *)-33007; *p = 1; }`, abi.FltBadAddr},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := compileD(t, tt.src, Options{})
			r := loadSpec(t, spec)
			recs := r.fire(t)
			var codes []uint64
			for _, rec := range recs {
				if u32(rec, abi.HdrEPID) == abi.EPIDFault {
					codes = append(codes, u64(rec, abi.FaultRecCode))
				}
			}
			if len(recs) != 1 || len(codes) != 1 || codes[0] != tt.code {
				t.Errorf("got %s, want one fault with code %d", render(t, spec, recs), tt.code)
			}
		})
	}
}

// TestFoldedConstantWidth: a folded constant keeps the 64 bits dtrace
// folds it in: an int variable stores 32 of them, a long variable all
// (min(1075064400 * 1000000000) in printa/tst.walltimestamp), a cast
// narrows.
func TestFoldedConstantWidth(t *testing.T) {
	needBPF(t)
	out := runD(t, `long l; BEGIN { x = 2147483647 + 1; l = 1075064400 * 1000000000; printf("%d %d %d\n", x, l, (char)300); }`, Options{})
	if want := "-2147483648 1075064400000000000 44\n"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
}
