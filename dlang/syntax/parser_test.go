package syntax

import (
	"strings"
	"testing"
)

// parseTests are valid programs and their trees as the printer shows
// them.
var parseTests = []struct {
	src, want string
}{
	// Probe descriptions.
	{"BEGIN {}", `(clause "BEGIN" {})`},
	{"syscall::read:entry { trace(arg0); }", `(clause "syscall::read:entry" {(call trace arg0);})`},
	{"pid$target:a.out:main:entry {}", `(clause "pid$target:a.out:main:entry" {})`},
	{"profile-97\n{\n}", `(clause "profile-97" {})`},
	{"fbt:mod:func*:return {}", `(clause "fbt:mod:func*:return" {})`},
	{"::open*:entry {}", `(clause "::open*:entry" {})`},
	{"a:b:c:d, e:f:g:h,\n  BEGIN\n{}", `(clause "a:b:c:d" "e:f:g:h" "BEGIN" {})`},
	{"BEGIN /x/ { }", `(clause "BEGIN" /x/ {})`},
	{"BEGIN\n/pid == $target && x / 2 > 1/\n{ exit(0) }",
		`(clause "BEGIN" /(&& (== pid $target) (> (/ x 2) 1))/ {(call exit 0);})`},
	{"BEGIN{x=1;;y=2}", `(clause "BEGIN" {(= x 1); ; (= y 2);})`},
	{"tick-1s, 1234 {}", `(clause "tick-1s" "1234" {})`},

	// Expressions.
	{"BEGIN { a = b ? c : d ? e : f }", `(clause "BEGIN" {(= a (? b c (? d e f)));})`},
	{"BEGIN { a = b = c += 1 }", `(clause "BEGIN" {(= a (= b (+= c 1)));})`},
	{"BEGIN { x = a || b ^^ c && d | e ^ f & g == h < i << j + k * l }",
		`(clause "BEGIN" {(= x (|| a (^^ b (&& c (| d (^ e (& f (== g (< h (<< i (+ j (* k l))))))))))));})`},
	{"BEGIN { x = -a + !b - ~c * *p + &q }", `(clause "BEGIN" {(= x (+ (- (+ (u- a) (! b)) (* (~ c) (u* p))) (u& q)));})`},
	{"BEGIN { x++; --y; z = x++ + ++y }", `(clause "BEGIN" {(post++ x); (pre-- y); (= z (+ (post++ x) (pre++ y)));})`},
	{"BEGIN { x = (a, b) }", `(clause "BEGIN" {(= x (paren (, a b)));})`},
	{"BEGIN { a[1, \"x\"] = b->c.d[2] }", `(clause "BEGIN" {(= (index a 1 "x") (index (. (-> b c) d) 2));})`},
	{"BEGIN { @ = count(); @a[k, 2] = sum(x); @b[1][2] = max(1) }",
		`(clause "BEGIN" {(= @ (call count)); (= (@a k 2) (call sum x)); (= (index (@b 1) 2) (call max 1));})`},
	{"BEGIN { self->x = this->y + $1 + $$2 + $pid }",
		`(clause "BEGIN" {(= self->x (+ (+ (+ this->y $1) $$2) $pid));})`},
	{"BEGIN { x = vmlinux`jiffies + `max_pfn }", "(clause \"BEGIN\" {(= x (+ vmlinux`jiffies `max_pfn));})"},
	{"BEGIN { x = (int)y; z = (unsigned long long *)&x; w = (struct foo *)p }",
		`(clause "BEGIN" {(= x (cast int y)); (= z (cast *unsigned long long (u& x))); (= w (cast *struct foo p));})`},
	{"BEGIN { x = (uint64_t)y * (size_t)z }", `(clause "BEGIN" {(= x (* (cast uint64_t y) (cast size_t z)));})`},
	{"BEGIN { x = (y)z }", `(clause "BEGIN" {})`},
	{"BEGIN { x = sizeof(int) + sizeof x + sizeof(y) + sizeof (char *) }",
		`(clause "BEGIN" {(= x (+ (+ (+ (sizeof int) (sizeof x)) (sizeof (paren y))) (sizeof *char)));})`},
	{"BEGIN { x = stringof(y) + stringof z }", `(clause "BEGIN" {(= x (+ (stringof (paren y)) (stringof z)));})`},
	{"BEGIN { x = offsetof(struct foo, bar) }", `(clause "BEGIN" {(= x (offsetof struct foo bar));})`},
	{"BEGIN { x = xlate<psinfo_t *>(curthread)->pr_pid }",
		`(clause "BEGIN" {(= x (-> (xlate *psinfo_t curthread) pr_pid));})`},
	{"BEGIN { x = 'a' + 'ab' + 0x10 + 010 + 10ul + 5LL }",
		`(clause "BEGIN" {(= x (+ (+ (+ (+ (+ 'a' 'ab') 0x10) 010) 10ul) 5LL));})`},
	{`BEGIN { printf("%s\n\t\x41\101\"", "a") }`, `(clause "BEGIN" {(call printf "%s\n\tAA\"" "a");})`},
	{"BEGIN { x = y.self + z->this + w->string }", `(clause "BEGIN" {(= x (+ (+ (. y self) (-> z this)) (-> w string)));})`},
	{"BEGIN { x = a / b; }", `(clause "BEGIN" {(= x (/ a b));})`},

	// if/else.
	{"BEGIN { if (x) y = 1; else { z = 2; w = 3 } q = 4 }",
		`(clause "BEGIN" {(if x (= y 1); else {(= z 2); (= w 3);}) (= q 4);})`},
	{"BEGIN { if (a) if (b) c(); else d(); }", `(clause "BEGIN" {(if a (if b (call c); else (call d);))})`},

	// Declarations.
	{"int x;", `(decl int x)`},
	{"int x, *y, z[10], **w[2][3];", `(decl int x y * z [10] w [2][3]**)`},
	{"self int a; this char *b;", "(decl self int a)\n(decl this char b *)"},
	{"extern int vmlinux`foo;", "(decl extern int vmlinux`foo)"},
	{"int a[string, int];", `(decl int a [string,int])`},
	{"int (*fp)(int, char *, ...);", `(decl int fp *func(int, *char, ...))`},
	{"const char * const volatile p;", `(decl const char p *const volatile )`},
	{"unsigned long long x; short int y; signed z;", "(decl unsigned long long x)\n(decl short int y)\n(decl signed z)"},
	{"typedef unsigned long mytype_t; mytype_t x; BEGIN { x = (mytype_t)1 }",
		"(decl typedef unsigned long mytype_t)\n(decl mytype_t x)\n(clause \"BEGIN\" {(= x (cast mytype_t 1));})"},
	{"struct foo { int a; char *b, c[4]; unsigned x : 3, : 2; };",
		`(decl struct foo{int a; char b *, c [4]; unsigned x : 3, _ : 2})`},
	{"struct foo { int a; union { int b; struct { char c; }; }; };",
		`(decl struct foo{int a; union{int b; struct{char c}}})`},
	{"struct foo x; union { int a; long b; } u;", "(decl struct foo x)\n(decl union{int a; long b} u)"},
	{"enum e { A, B = 2, C }; enum e v;", "(decl enum e{A, B=2, C})\n(decl enum e v)"},
	{"typedef struct s { int a; } s_t; s_t *p;", "(decl typedef struct s{int a} s_t)\n(decl s_t p *)"},
	{"int*x;", `(decl int x *)`},
	{"typedef int foo; struct s { foo foo; };", "(decl typedef int foo)\n(decl struct s{foo foo})"},
	{"inline int X = 3 + 4;", `(inline int X = (+ 3 4))`},
	{"inline string S[int i] = i == 0 ? \"zero\" : \"other\";", `(inline string S [i int] = (? (== i 0) "zero" "other"))`},
	{"translator out_t < struct in *P > { a = P->x; b = 2; };",
		`(translator out_t <*struct in P> (a (-> P x)) (b 2))`},
	{"translator struct o < int x > { };", `(translator struct o <int x>)`},
	{"provider p { probe q__start(char *, int); probe r(int) : (string); };",
		`(provider p (probe q__start (*char, int)) (probe r (int) : (string)))`},

	// Control lines.
	{"#pragma D option quiet\nBEGIN {}", "(#pragma D option quiet)\n(clause \"BEGIN\" {})"},
	{"BEGIN {\n#pragma D option bufsize=4m\n}", "(#pragma D option bufsize=4m)\n(clause \"BEGIN\" {})"},
	{"#!/usr/sbin/dtrace -s\n  # 3 \"x.d\"\nBEGIN {}", `(clause "BEGIN" {})`},
	{"#pragma D binding \"1.0\" foo\n#ident x\n", "(#pragma D binding \"1.0\" foo)\n(#ident x)"},
	{"/* c */ BEGIN /* d */ { /* e */ }", `(clause "BEGIN" {})`},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		if tt.src == "BEGIN { x = (y)z }" {
			continue // an error, tested below
		}
		cfg := &Config{IsTypeName: func(n string) bool { return n == "psinfo_t" || n == "out_t" }}
		prog, err := cfg.Parse(NewFileSet(), "t.d", []byte(tt.src))
		if err != nil {
			t.Errorf("%q: %v", tt.src, err)
			continue
		}
		if got := String(prog); got != tt.want {
			t.Errorf("%q:\n got %s\nwant %s", tt.src, got, tt.want)
		}
	}
}

// errorTests are invalid programs with the error dtrace reports.
var errorTests = []struct {
	src  string
	want string // "TAG line N: msg"
}{
	{"BEGIN { x = (y)z }", `D_SYNTAX line 1: syntax error near "z }"`},
	{"struct foo { int; };", `D_SYNTAX line 1: syntax error near ";"`},
	{"struct foo { struct bar { int b; }; };", `D_SYNTAX line 1: syntax error near ";"`},
	{"BEGIN { x = (y)timestamp }", `D_SYNTAX line 1: syntax error near "timestamp"`},
	{"BEGIN\n{\n\ta = 1 +;\n}", `D_SYNTAX line 3: syntax error near ";"`},
	{"BEGIN\n{\n\ttrace(1);\n", `D_SYNTAX line 4: syntax error near end of input`},
	{"BEGIN\n{\n\ttrace(1));\n}", `D_SYNTAX line 3: extra ) in input stream`},
	{"BEGIN\n/x[1/\n{}", `D_SYNTAX line 3: closing ] expected in predicate before /`},
	{"BEGIN\n/(x/ {}", `D_SYNTAX line 2: closing ) expected in predicate before /`},
	{"BEGIN\n{\n\tx = \"abc\n\";\n}", `D_STR_NL line 4: newline encountered in string literal`},
	{"BEGIN { x = ''; }", `D_CHR_NULL line 1: empty character constant`},
	{"BEGIN { x = 'abcdefghi'; }", `D_CHR_OFLOW line 1: character constant is too long`},
	{"BEGIN { x = '\n'; }", `D_CHR_NL line 2: newline encountered in character constant`},
	{"BEGIN { x = 0128; }", `D_INT_DIGIT line 1: constant 0128 contains invalid digit 8`},
	{"BEGIN { x = 99999999999999999999; }", `D_INT_OFLOW line 1: constant 99999999999999999999 results in integer overflow`},
	{"BEGIN { x = 1.5; }", `D_SYNTAX line 1: floating-point constants are not permitted`},
	{"BEGIN { x = $-1; }", `D_SYNTAX line 1: syntax error near "$"`},
	{"BEGIN { x = $foo; }", `D_MACRO_UNDEF line 1: macro variable $foo is not defined`},
	{"BEGIN { i = 123$pid; }", `D_SYNTAX line 1: syntax error near "$pid"`},
	{"BEGIN { x = 1 # 2; }", `D_SYNTAX line 1: syntax error near "#"`},
	{"/* open\n", `D_SYNTAX line 2: end-of-file encountered before matching */`},
	{"#pragma D option", `D_SYNTAX line 1: end-of-file encountered before end of control line`},
	{"#foo\n", `D_PRAGCTL_INVAL line 1: invalid control directive: #foo`},
	{"#pragma D foo\n", `D_PRAGMA_INVAL line 1: invalid D pragma: foo`},
	{"profile-1\n\texit(0);\n}", `D_SYNTAX line 1: expected predicate and/or actions following probe description`},
	{"BEGIN\n/x/\n;", `D_SYNTAX line 2: expected actions { } following probe description and predicate`},
	{"BEGIN\n/x\n== 1\n/\n;", `D_SYNTAX line 4: expected actions { } following probe description and predicate`},
	{"BEGIN\n/(x\n== 1\n)\n/\n;", `D_SYNTAX line 4: expected actions { } following probe description and predicate`},
	{"BEGIN\n/f(x,\n1)\n/\n;", `D_SYNTAX line 3: expected actions { } following probe description and predicate`},
	{"BEGIN\n{\n\tint i = 0;\n}", `D_SYNTAX line 3: syntax error near "int"`},
	{"int i = 0;", `D_SYNTAX line 1: syntax error near "="`},
	// dtrace quotes the rest of the line after a name it peeked past.
	{"typedef pint new_int;\n", `D_SYNTAX line 1: syntax error near "new_int;"`},
	{"int*x\n", `D_SYNTAX line 2: syntax error near end-of-input`},
	{"struct s { int a; };\nstruct s { int b; };", `D_DECL_TYPERED line 2: type redeclared: struct s`},
	{"BEGIN { x = (char int)0; }", `D_DECL_COMBO line 1: invalid type combination`},
	{"self this int x;", `D_DECL_CLASS line 1: only one storage class allowed in a declaration`},
	{"struct s { };", `D_SYNTAX line 1: syntax error near "}"`},
	{"enum e { A, };", `D_SYNTAX line 1: syntax error near "}"`},
	{"BEGIN { x + 1 = 2 }", `D_SYNTAX line 1: syntax error near "="`},
	{"BEGIN { } ;", `D_SYNTAX line 1: syntax error near ";"`},
	{"BEGIN { x = 1 'a'; }", `D_SYNTAX line 1: syntax error near "'a"`},
	{"BEGIN { x = 1 y; }", `D_SYNTAX line 1: syntax error near "y; }"`},
	{"BEGIN { x = a /; }", `D_SYNTAX line 1: syntax error near "/; }"`},
	{"BEGIN { x = a / ; }", `D_SYNTAX line 1: syntax error near "/"`},
	{"BEGIN { x = a /\n\n; }", `D_SYNTAX line 3: syntax error near "/"`},
	{"BEGIN { x = sizeof(int)y; }", `D_SYNTAX line 1: syntax error near "y; }"`},
	{"BEGIN /x/ { }\nBEGIN / / { }", `D_SYNTAX line 2: syntax error near "/"`},
	{"BEGIN { a = b ? c : d = 1 }", `D_SYNTAX line 1: syntax error near "="`},
	{"BEGIN { a = (int)b = 1 }", `D_SYNTAX line 1: syntax error near "="`},
	{"BEGIN { a[] = 1 }", `D_SYNTAX line 1: syntax error near "]"`},
	{"BEGIN { inline int x = 1; }", `D_SYNTAX line 1: syntax error near "inline"`},
	{"BEGIN (", `D_SYNTAX line 1: syntax error near "("`},
	{"int f(self int x);", `D_SYNTAX line 1: syntax error near "self"`},
	{"BEGIN { x = (static int)y; }", `D_SYNTAX line 1: syntax error near "static"`},
	{"BEGIN { x = 1 } }", `D_SYNTAX line 1: syntax error near "}"`},
}

func TestErrors(t *testing.T) {
	// The caller tells the parser the predefined identifiers (the
	// checker's table); timestamp is the one these sources use.
	cfg := &Config{IsIdent: func(name string) bool { return name == "timestamp" }}
	for _, tt := range errorTests {
		_, err := cfg.Parse(NewFileSet(), "t.d", []byte(tt.src))
		if err == nil {
			t.Errorf("%q: no error, want %s", tt.src, tt.want)
			continue
		}
		e := err.(ErrorList)[0]
		if got := e.Tag + " " + e.Error(); got != tt.want {
			t.Errorf("%q:\n got %s\nwant %s", tt.src, got, tt.want)
		}
	}
}

// TestProbeSpec checks text given with -n: bare descriptions are
// clauses, and descriptions are never type names.
func TestProbeSpec(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"BEGIN", `(clause "BEGIN")`},
		{"syscall::read:entry", `(clause "syscall::read:entry")`},
		{"foo", `(clause "foo")`},
		{"uint64_t", `(clause "uint64_t")`},
		{"BEGIN { exit(0) }", `(clause "BEGIN" {(call exit 0);})`},
		{"BEGIN, END", `(clause "BEGIN" "END")`},
	} {
		prog, err := ParseProbeSpec(NewFileSet(), "", []byte(tt.src), 0)
		if err != nil {
			t.Errorf("%q: %v", tt.src, err)
			continue
		}
		if got := String(prog); got != tt.want {
			t.Errorf("%q:\n got %s\nwant %s", tt.src, got, tt.want)
		}
	}
	// Errors in -n text carry no line.
	_, err := ParseProbeSpec(NewFileSet(), "", []byte("BEGIN { x = }"), 0)
	if err == nil || err.Error() != `syntax error near "}"` {
		t.Errorf("got %v", err)
	}
}

// TestPositions checks node positions and line directives.
func TestPositions(t *testing.T) {
	fset := NewFileSet()
	src := "BEGIN\n{\n\tx = y + 1;\n}\n"
	prog, err := Parse(fset, "p.d", []byte(src), 0)
	if err != nil {
		t.Fatal(err)
	}
	c := prog.Decls[0].(*ProbeClause)
	x := c.Body.List[0].(*ExprStmt).X.(*AssignExpr)
	for _, tt := range []struct {
		n        Node
		pos, end string
	}{
		{c, "p.d:1:1", "p.d:4:2"},
		{x, "p.d:3:2", "p.d:3:11"},
		{x.Y, "p.d:3:6", "p.d:3:11"},
		{c.Descs[0], "p.d:1:1", "p.d:1:6"},
	} {
		if got := fset.Position(tt.n.Pos()).String(); got != tt.pos {
			t.Errorf("%s: pos %s, want %s", String(tt.n), got, tt.pos)
		}
		if got := fset.Position(tt.n.End()).String(); got != tt.end {
			t.Errorf("%s: end %s, want %s", String(tt.n), got, tt.end)
		}
	}

	// A cpp line marker renumbers the lines after it.
	src = "# 10 \"orig.d\"\nBEGIN\n{\n\tx = ;\n}\n"
	_, err = Parse(NewFileSet(), "p.d", []byte(src), 0)
	if err == nil || !strings.Contains(err.Error(), "line 12:") {
		t.Errorf("got %v, want an error on line 12", err)
	}
	if e := err.(ErrorList)[0]; e.Pos.Filename != "orig.d" {
		t.Errorf("file %q, want orig.d", e.Pos.Filename)
	}
}

// TestScanner checks literal values.
func TestScanner(t *testing.T) {
	for _, tt := range []struct {
		src    string
		val    uint64
		suffix string
	}{
		{"0", 0, ""},
		{"42", 42, ""},
		{"0x2A", 42, ""},
		{"052", 42, ""},
		{"42uL", 42, "ul"},
		{"42ULL", 42, "ull"},
		{"42ll", 42, "ll"},
		{"'a'", 'a', ""},
		{"'ab'", 'a'<<8 | 'b', ""},
		{`'\n'`, '\n', ""},
		{`'\0'`, 0, ""},
		{`'\377'`, 0xff, ""},
		{`'\x41'`, 0x41, ""},
		{"0xffffffffffffffff", ^uint64(0), ""},
	} {
		prog, err := Parse(NewFileSet(), "t.d", []byte("BEGIN { x = "+tt.src+" }"), 0)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		lit := prog.Decls[0].(*ProbeClause).Body.List[0].(*ExprStmt).X.(*AssignExpr).Y.(*IntLit)
		if lit.Value != tt.val || lit.Suffix != tt.suffix {
			t.Errorf("%s: got %d %q, want %d %q", tt.src, lit.Value, lit.Suffix, tt.val, tt.suffix)
		}
	}
	for _, tt := range []struct{ src, want string }{
		{`"a\tb"`, "a\tb"},
		// As dtrace's stresc2chr: \' and \? keep their backslash.
		{`"\a\b\f\n\r\v\\\'\"\?"`, "\a\b\f\n\r\v\\\\'\"\\?"},
		{`"\q"`, `\q`},
		{`"\1234"`, "S4"},
	} {
		prog, err := Parse(NewFileSet(), "t.d", []byte("BEGIN { x = "+tt.src+" }"), 0)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		lit := prog.Decls[0].(*ProbeClause).Body.List[0].(*ExprStmt).X.(*AssignExpr).Y.(*StringLit)
		if lit.Value != tt.want {
			t.Errorf("%s: got %q, want %q", tt.src, lit.Value, tt.want)
		}
	}
}

// TestParseType checks type names given as text, where every name is a
// type name.
func TestParseType(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"struct task_struct *", "*struct task_struct"},
		{"char *", "*char"},
		{"unsigned long long", "unsigned long long"},
		{"vmlinux`foo_t **", "**vmlinux`foo_t"},
		{"int [4]", "[4]int"},
		{"void (*)(int)", "*func(int)void"},
		{"bar", "bar"},
	} {
		tn, err := (&Config{}).ParseType(NewFileSet(), "", []byte(tt.src))
		if err != nil {
			t.Errorf("%q: %v", tt.src, err)
			continue
		}
		if got := String(tn); got != tt.want {
			t.Errorf("%q: got %s, want %s", tt.src, got, tt.want)
		}
	}
	if _, err := (&Config{}).ParseType(NewFileSet(), "", []byte("int x")); err == nil {
		t.Error("int x: no error")
	}
}

// TestParseExpr checks expressions given as text.
func TestParseExpr(t *testing.T) {
	x, err := (&Config{}).ParseExpr(NewFileSet(), "", []byte("a + b * (char)c"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := String(x), "(+ a (* b (cast char c)))"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if _, err := (&Config{}).ParseExpr(NewFileSet(), "", []byte("a +")); err == nil {
		t.Error("a +: no error")
	}
}

// TestDeepNesting checks that deep nesting is an error, not a crash.
func TestDeepNesting(t *testing.T) {
	for _, src := range []string{
		"BEGIN { x = " + strings.Repeat("(", 20000) + "1" + strings.Repeat(")", 20000) + " }",
		"BEGIN { x = " + strings.Repeat("-", 20000) + "1 }",
		"int " + strings.Repeat("(", 20000) + "x" + strings.Repeat(")", 20000) + ";",
		"BEGIN { " + strings.Repeat("if (1) ", 20000) + "x = 1; }",
		"BEGIN { " + strings.Repeat("x = ", 20000) + "1; }",
		"BEGIN { x = " + strings.Repeat("a ? b : ", 20000) + "1; }",
	} {
		_, err := Parse(NewFileSet(), "t.d", []byte(src), 0)
		if err == nil || !strings.Contains(err.Error(), "memory exhausted") {
			t.Errorf("%.20q...: got %v", src, err)
		}
	}
}
