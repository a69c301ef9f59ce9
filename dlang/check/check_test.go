package check

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// checkSrc parses and checks src as the script "t.d".
func checkSrc(t *testing.T, src string, conf *Config) (*Info, error) {
	t.Helper()
	fset := syntax.NewFileSet()
	prog, err := syntax.Parse(fset, "t.d", []byte(src), 0)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	if conf == nil {
		conf = &Config{}
	}
	conf.Source = func(string) []byte { return []byte(src) }
	return Check(fset, []*syntax.Program{prog}, conf)
}

var errorComment = regexp.MustCompile(`/\* ERROR (D_[A-Z_]+) "([^"]*)"( line [0-9]+)? \*/`)

// TestErrors checks programs whose first error is written inline as
// /* ERROR D_TAG "message part" */ on the line dtrace reports it (or with
// "line N" after the message).
func TestErrors(t *testing.T) {
	tests := []string{
		`BEGIN { trace(x); /* ERROR D_IDENT_UNDEF "failed to resolve x: Unknown variable name" */ }`,
		`BEGIN { trace(self->x); /* ERROR D_VAR_UNDEF "self->x has not yet been declared or assigned" */ }`,
		`BEGIN { x = 1 / 0; /* ERROR D_DIV_ZERO "expression contains division by zero" */ }`,
		`BEGIN { x = 1 % (2 - 2); /* ERROR D_DIV_ZERO "division by zero" */ }`,
		`BEGIN { trace(); /* ERROR D_PROTO_LEN "trace( ) prototype mismatch: 0 args passed, 1 expected" */ }`,
		`BEGIN { ustack(1, 2, 3); /* ERROR D_PROTO_LEN "ustack( ) prototype mismatch: 3 args passed, at most 2 expected" */ }`,
		`BEGIN { printf(); /* ERROR D_PROTO_LEN "printf( ) prototype mismatch: 0 args passed, at least 1 expected" */ }`,
		"BEGIN { progenyof(\"a\"); /* ERROR D_PROTO_ARG \"progenyof( ) argument #1 is incompatible with prototype:\n\tprototype: pid_t\n\t argument: string\" */ }",
		`BEGIN { substr(1, 2); /* ERROR D_PROTO_ARG "prototype: char *" */ }`,
		`BEGIN { x = "a" + "b"; /* ERROR D_OP_INCOMPAT "operands have incompatible types: " */ }`,
		`BEGIN { x = "a" * 2; /* ERROR D_OP_ARITH "operator * requires operands of arithmetic type" */ }`,
		`BEGIN { x = ~"a"; /* ERROR D_OP_INT "operator ~ requires an operand of integral type" */ }`,
		`BEGIN { x = *arg0; /* ERROR D_DEREF_NONPTR "cannot dereference non-pointer type" */ }`,
		`BEGIN { x = 1; y = &x; /* ERROR D_ADDROF_VAR "cannot take address of dynamic variable" */ }`,
		`BEGIN { arg0 = 1; /* ERROR D_OP_WRITE "operator = can only be applied to a writable variable" */ }`,
		`BEGIN { 1 = 2; /* ERROR D_OP_LVAL "operator = requires modifiable lvalue as an operand" */ }`,
		`BEGIN { trace(sizeof (void)); /* ERROR D_SIZEOF_TYPE "cannot apply sizeof to an operand of unknown size" */ }`,
		`BEGIN { @a = count(); @a = sum(1); /* ERROR D_AGG_REDEF "aggregation redefined: @a" */ }`,
		`BEGIN { @a = sum("x"); /* ERROR D_AGG_SCALAR "sum( ) argument #1 must be of scalar type" */ }`,
		`BEGIN { @a = 1; /* ERROR D_AGG_FUNC "@a must be assigned the result of an aggregating function" */ }`,
		`BEGIN { @a = lquantize(1, 10, 0); /* ERROR D_LQUANT_MISMATCH "lquantize( ) base (argument #1) must be less than limit (argument #2)" */ }`,
		`BEGIN { @a = llquantize(1, 1, 0, 1, 1); /* ERROR D_LLQUANT_FACTORVAL "greater than or equal to 2" */ }`,
		`BEGIN { speculate(1); @a = count(); /* ERROR D_AGG_SPEC "aggregating actions may not follow speculate( )" */ }`,
		`BEGIN { trace(1); speculate(1); /* ERROR D_SPEC_DREC "speculate( ) may not follow data-recording action(s)" */ }`,
		`BEGIN { speculate(1); exit(0); /* ERROR D_EXIT_SPEC "exit( ) may not follow speculate( )" */ }`,
		`BEGIN { commit(1); trace(1); /* ERROR D_DREC_COMM "data-recording actions may not follow commit( )" */ }`,
		`BEGIN { x[1] = 1; x[1, 2] = 2; /* ERROR D_PROTO_LEN "x[ ] prototype mismatch: 2 keys passed, 1 expected" */ }`,
		"BEGIN { x[1] = 1; x[\"a\"] = 2; /* ERROR D_PROTO_ARG \"x[ ] key #1 is incompatible with prototype:\n\tprototype: int\n\t      key: string\" */ }",
		`BEGIN { printf("%d\n", "a"); /* ERROR D_PRINTF_ARG_TYPE "printf( ) argument #2 is incompatible with conversion #1 prototype" */ }`,
		`BEGIN { printf("%d %d\n", 1); /* ERROR D_PRINTF_ARG_PROTO "conversion #2 (%d) is missing a corresponding value argument" */ }`,
		`BEGIN { printa(@nope); /* ERROR D_PRINTA_AGGBAD "undefined aggregation: @nope" */ }`,
		`BEGIN { trace(stringof(trace(1))); /* ERROR D_STRINGOF_TYPE "cannot apply stringof to a value of type void" */ }`,
		`int x; int x[int]; /* ERROR D_DECL_IDRED "identifier redeclared: x" */`,
		`struct s { int a; int a; /* ERROR D_UNKNOWN "failed to define member 'a': Duplicate member or variable name" */ };`,
		`struct s { int a : 0; /* ERROR D_DECL_BFCONST "positive integral constant expression expected as bit-field size" */ };`,
		`struct s { int a : 33; /* ERROR D_DECL_BFSIZE "bit-field too big for type: a" */ };`,
		`struct s p; /* ERROR D_DECL_INCOMPLETE "incomplete struct/union/enum struct s: p" */`,
		`void v; /* ERROR D_DECL_VOIDOBJ "cannot have void object: v" */`,
		"enum e { A = 2147483648\n/* ERROR D_DECL_ENOFLOW \"enumerator 'A' value overflows INT_MAX (2147483647)\" */ };",
		`BEGIN { trace(offsetof(int, a)); /* ERROR D_OFFSETOF_TYPE "offsetof operand must be a struct or union type" */ }`,
		`struct s { int a; }; BEGIN { trace(((struct s *)0)->b); /* ERROR D_TYPE_MEMBER "b is not a member of struct s" */ }`,
		`struct s { int a[5]; } v; BEGIN { trace(v.a[5]); /* ERROR D_ARR_BOUNDS "index outside array bounds: 5, max is 5" */ }`,
		`BEGIN { trace($1); /* ERROR D_MACRO_UNDEF "macro argument $1 is not defined" */ }`,
		`BEGIN /"a"/ { trace(1); } /* ERROR D_PRED_SCALAR "predicate result must be of scalar type" */`,
		"/* ERROR D_PRAGMA_OPTSET \"failed to set option 'nosuchoption': Invalid option name\" line 2 */\n#pragma D option nosuchoption\nBEGIN {}",
		`BEGIN { trace(args[0]); /* ERROR D_ARGS_IDX "index 0 is out of range for dtrace:::BEGIN args[ ]" */ }`,
		`inline int rand = 1; /* ERROR D_DECL_IDRED "identifier redefined: rand" */`,
		`BEGIN { avg(1); /* ERROR D_CG_EXPR "aggregating function avg( ) may not be called from a D expression" */ }`,
		`BEGIN { x = (long char)1; /* ERROR D_DECL_CHARATTR "short and long may not be used with char type" */ }`,
		`BEGIN { x = xlate<struct nope *>(arg0); /* ERROR D_XLATE_NONE "cannot translate from" */ }`,
		`BEGIN { p = (void *)0; p++; /* ERROR D_OP_VFPTR "operator ++ requires an operand of known size" */ }`,
		`BEGIN { x = 1; trace(x->a); /* ERROR D_OP_PTR "operator -> must be applied to a pointer" */ }`,
		`BEGIN { x = 1; trace(x.a); /* ERROR D_OP_SOU "operator . cannot be applied to type" */ }`,
		`BEGIN { this->a = 1; trace(this->b[1]); /* ERROR D_ARR_LOCAL "local variables may not be used as associative arrays: b" */ }`,
		`this int a[int]; /* ERROR D_DECL_LOCASSC "associative arrays may not be declared as local variables: a" */`,
		`BEGIN { a[trace(1)] = 1; /* ERROR D_KEY_TYPE "void expression may not be used as associative array index: key #1" */ }`,
		`struct o { int a; }; translator struct o < int *p > { b = *p; }; /* ERROR D_XLATE_MEMB "translator member b is not a member of struct o" */`,
		`struct o { int a; }; translator int < int *p > { a = *p; }; /* ERROR D_XLATE_SOU "translator output type must be a struct or union" */`,
		`struct o { char *a; }; translator struct o < int *p > { a = *p; }; /* ERROR D_XLATE_INCOMPAT "translator member a definition uses incompatible types" */`,
		`struct o { int a; }; translator struct o < int *p > { a = *p; }; translator struct o < int *q > { a = 1; }; /* ERROR D_XLATE_REDECL "translator from int * to struct o has already been declared" */`,
		`struct o { int a; int b; }; translator struct o < int *p > { a = *p; }; BEGIN { trace(xlate<struct o>((int *)0).b); /* ERROR D_XLATE_NOCONV "translator does not define conversion for member: b" */ }`,
		`BEGIN { x = 1; x(); /* ERROR D_FUNC_IDKIND "scalar 'x' may not be referenced as a function" */ }`,
		`BEGIN { nosuch(); /* ERROR D_FUNC_UNDEF "undefined function name: nosuch" */ }`,
		`BEGIN { trace(printf); /* ERROR D_IDENT_BADREF "tracing function 'printf' may not be referenced as scalar" */ }`,
		`BEGIN { trace(1) + 1; /* ERROR D_OP_ACT "operator + operands cannot be actions" */ }`,
		`BEGIN { x = (struct nope)1; /* ERROR D_CAST_INVAL "invalid cast expression" */ }`,
		`BEGIN { x = 1; y = &(x + 1); /* ERROR D_ADDROF_LVAL "unacceptable operand for unary & operator" */ }`,
		`BEGIN { stack(0); /* ERROR D_STACK_SIZE "stack( ) argument #1 must be a non-zero positive integer constant" */ }`,
		`BEGIN { tracemem(arg0, 0); /* ERROR D_TRACEMEM_SIZE "tracemem( ) argument #2 must be a non-zero positive integral constant expression" */ }`,
		`BEGIN { @a = count(); printa("%d %d\n", @a); /* ERROR D_PRINTF_ARG_PROTO "printa( ) prototype mismatch: conversion #1 (%d) is missing a corresponding value argument" */ }`,
		`BEGIN { @a[1] = count(); @b = count(); printa(@a, @b); /* ERROR D_PRINTA_AGGKEY "@a and @b do not have matching key signatures" */ }`,
		`BEGIN { trace(1); commit(1); /* ERROR D_COMM_DREC "commit( ) may not follow data-recording action(s)" */ }`,
		`BEGIN { speculate(1); speculate(2); /* ERROR D_SPEC_SPEC "speculate( ) may not follow speculate( )" */ }`,
		`BEGIN { speculate(1); chill(1); /* ERROR D_ACT_SPEC "destructive actions may not follow speculate( )" */ }`,
		`BEGIN { commit(1); @a = count(); /* ERROR D_AGG_COMM "aggregating actions may not follow commit( )" */ }`,
		`BEGIN { x = (char *)alloca(1); x = (char *)1; /* ERROR D_ALLOCA_INCOMPAT "x: cannot reuse the same identifier for both alloca and non-alloca allocations" */ }`,
		`BEGIN { bcopy("a", (void *)0, 1); /* ERROR D_PROTO_ARG "prototype: alloca pointer" */ }`,
		`BEGIN { @a = lquantize(1, 0, 10, 2); @a = lquantize(1, 0, 10, 5); /* ERROR D_LQUANT_MATCHSTEP "lquantize( ) step (argument #3) doesn't match previous declaration: expected 2, found 5" */ }`,
		`BEGIN { @ = quantize(1, 2, 3); /* ERROR D_PROTO_LEN "quantize( ) prototype mismatch: 3 args passed, at most 2 expected" */ }`,
	}
	for _, src := range tests {
		m := errorComment.FindStringSubmatchIndex(src)
		if m == nil {
			t.Fatalf("no ERROR comment in %q", src)
		}
		tag, msg := src[m[2]:m[3]], src[m[4]:m[5]]
		line := 1 + strings.Count(src[:m[0]], "\n")
		if m[6] >= 0 {
			// An explicit line, for errors on lines a comment cannot share.
			line, _ = strconv.Atoi(src[m[6]+len(" line ") : m[7]])
		}
		conf := &Config{
			ProbeArgs: func(string) *ProbeInfo { return &ProbeInfo{Name: "dtrace:::BEGIN", Args: []types.Type{}} },
			Pragma: func(name, value string) error {
				return errString("Invalid option name")
			},
		}
		_, err := checkSrc(t, src, conf)
		if err == nil {
			t.Errorf("%q: no error, want %s", src, tag)
			continue
		}
		e := err.(ErrorList)[0]
		if e.Tag.String() != tag || !strings.Contains(e.Msg, msg) || e.Position.Line != line {
			t.Errorf("%q:\n got %s (line %d)\nwant [%s] line %d: ...%s...", src, e.Tagged(), e.Position.Line, tag, line, msg)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// TestValid checks programs that must have no error.
func TestValid(t *testing.T) {
	tests := []string{
		`BEGIN { x = 1; y = x + 2; trace(y); }`,
		`BEGIN { self->x = timestamp; } END /self->x/ { trace(timestamp - self->x); }`,
		`BEGIN { this->s = "abc"; trace(strlen(this->s)); }`,
		`BEGIN { a["x", 1] = 2; trace(a["y", 3]); a["x", 1] = 0; }`,
		`BEGIN { @[execname, pid] = count(); @q = quantize(1); @l = lquantize(1, 0, 100, 10); printa(@); printa("%s %d %@d\n", @); clear(@); trunc(@q, 1); normalize(@l, 2); }`,
		`struct s { int a; char b[4]; struct s *next; } v; BEGIN { v.a = 1; trace(v.b[2]); trace(v.next->a); trace(sizeof (struct s)); }`,
		`enum e { A, B = 5, C }; BEGIN { x = C; trace(x == B); trace(x == A); }`,
		`typedef unsigned long long u64; u64 g; BEGIN { g = 1; trace(g); }`,
		`inline int N = 3 + 4; BEGIN { trace(N * 2); }`,
		`BEGIN { trace(execname == "bash" ? 1 : 2); trace(probefunc); printf("%s %d %x\n", execname, pid, arg0); }`,
		`BEGIN { x++; ++self->y; trace(x); trace(self->y); }`,
		`BEGIN { a[probename]++; self->b[1]--; } END { trace(a["x"] > 0 ? 1 : 2); }`,
		`BEGIN { trace(strjoin("a", "b")); trace(substr("abc", 1)); trace(index("abc", "b")); trace(basename("/a/b")); }`,
		`BEGIN { speculate(speculation()); trace(1); } END { commit(1); }`,
		// Destructive actions record no data, as in illumos.
		`BEGIN { chill(1); speculate(1); } END { commit(1); raise(9); }`,
		`BEGIN { p = (char *)alloca(10); p[0] = 1; trace(p[0]); }`,
		`BEGIN { trace(stringof(1)); trace((string)"x"); }`,
		`BEGIN /pid != 0 && tid > 0 || !arg1/ { trace(curthread); exit(0); }`,
		`this int t; BEGIN { this->t = 1; trace(this->t); }`,
		`BEGIN { trace(NULL); x = (int *)NULL; trace(x == NULL); }`,
	}
	for _, src := range tests {
		if _, err := checkSrc(t, src, nil); err != nil {
			t.Errorf("%q: %v", src, err.(ErrorList)[0].Tagged())
		}
	}
}

// TestInfo checks what the code generator reads from Info.
func TestInfo(t *testing.T) {
	src := `int g;
BEGIN /g == 0/ { g = 2 * 3 + 1; self->t = timestamp; this->l = "s"; @c[execname] = count(); @l = lquantize(arg0, 0, 10, 2); printf("%d\n", g); }
END { self->t = 0; trace(sizeof (int)); }`
	fset := syntax.NewFileSet()
	prog, err := syntax.Parse(fset, "t.d", []byte(src), 0)
	if err != nil {
		t.Fatal(err)
	}
	info, err := Check(fset, []*syntax.Program{prog}, &Config{StrSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Clauses) != 2 || info.Clauses[0].Probes[0] != "BEGIN" {
		t.Fatalf("clauses: %+v", info.Clauses)
	}
	kinds := map[string]VarKind{}
	for _, v := range info.Vars {
		kinds[v.Name] = v.Kind
	}
	if kinds["g"] != GlobalVar || kinds["t"] != ThreadVar || kinds["l"] != LocalVar {
		t.Errorf("vars: %v", kinds)
	}
	if len(info.Aggs) != 2 || info.Aggs[0].Func != "count" || len(info.Aggs[0].Keys) != 1 ||
		info.Aggs[1].Func != "lquantize" || len(info.Aggs[1].Params) != 3 || info.Aggs[1].Params[2] != 2 {
		t.Errorf("aggs: %+v %+v", info.Aggs[0], info.Aggs[1])
	}
	// Constant folding and types.
	found := 0
	for e, tv := range info.Types {
		switch e := e.(type) {
		case *syntax.BinaryExpr:
			if e.Op == syntax.ADD && tv.Value != nil {
				found++
				if tv.Value.Int != 7 || tv.Type != types.Int {
					t.Errorf("2*3+1 = %+v", tv)
				}
			}
		case *syntax.SizeofExpr:
			found++
			if tv.Value == nil || tv.Value.Int != 4 {
				t.Errorf("sizeof(int) = %+v", tv)
			}
		case *syntax.ScopedVar:
			if e.Name.Name == "l" && !types.IsString(tv.Type) {
				t.Errorf("this->l: %v", tv.Type)
			}
		}
	}
	if found != 2 {
		t.Errorf("found %d folded expressions", found)
	}
	if len(info.Formats) != 1 || info.StrSize != 64 {
		t.Errorf("formats %d, strsize %d", len(info.Formats), info.StrSize)
	}
	if len(info.Clauses[0].Locals) != 1 || len(info.Clauses[0].Aggs) != 2 {
		t.Errorf("clause 0 uses: %+v", info.Clauses[0])
	}
}

// fakeKernel is a Kernel with a few types and one symbol.
type fakeKernel struct{ task *types.Struct }

func newFakeKernel() *fakeKernel {
	task := &types.Struct{Tag: "task_struct", Module: "vmlinux", Complete: true}
	task.AddField("pid", types.Pid, 0)
	task.AddField("comm", &types.Array{Elem: types.Char, Len: 16}, 0)
	task.AddField("parent", types.NewPointer(task), 0)
	return &fakeKernel{task: task}
}

func (k *fakeKernel) LookupType(module, name string) types.Type {
	switch name {
	case "struct task_struct":
		return k.task
	case "u32":
		return &types.Typedef{Name: "u32", Module: "vmlinux", Type: types.UnsignedInt}
	}
	return nil
}

func (k *fakeKernel) LookupSymbol(module, name string) (*Symbol, bool) {
	if name == "jiffies" {
		return &Symbol{Module: "vmlinux", Name: name, Addr: 0xffffffff81000000, Type: types.UnsignedLong}, true
	}
	return nil, false
}

// TestKernel checks kernel types and symbols through Config.Kernel.
func TestKernel(t *testing.T) {
	k := newFakeKernel()
	src := "BEGIN { trace(curthread->parent->pid); trace(`jiffies + 1); x = (struct task_struct *)arg0; trace(x->comm); trace(sizeof (struct vmlinux`task_struct)); }"
	fset := syntax.NewFileSet()
	prog, err := (&syntax.Config{IsTypeName: KernelTypeNames(k)}).Parse(fset, "t.d", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	info, err := Check(fset, []*syntax.Program{prog}, &Config{Kernel: k})
	if err != nil {
		t.Fatal(err.(ErrorList)[0].Tagged())
	}
	var sawSym, sawPid bool
	for _, o := range info.Uses {
		if s, ok := o.(*Symbol); ok && s.Name == "jiffies" {
			sawSym = true
		}
	}
	for e, m := range info.Members {
		if m.Field.Name == "pid" && info.Types[e].Type == types.Pid {
			sawPid = true
		}
	}
	if !sawSym || !sawPid {
		t.Errorf("symbol %v, pid member %v", sawSym, sawPid)
	}
	if !KernelTypeNames(k)("u32") || KernelTypeNames(k)("task_struct") {
		t.Error("KernelTypeNames")
	}
	_, err = checkSrc(t, "BEGIN { trace(curthread->nosuch); }", &Config{Kernel: k})
	if err == nil || err.(ErrorList)[0].Msg != "nosuch is not a member of struct task_struct" {
		t.Errorf("got %v", err)
	}
}

// TestExprTypes checks the type (and constant value) given to expressions.
func TestExprTypes(t *testing.T) {
	tests := []struct {
		expr, typ string
		val       string // "" when not constant
	}{
		{"1", "int", "1"},
		{"0xffffffff", "unsigned int", "4294967295"},
		{"4294967295", "long", "4294967295"},
		{"1u", "unsigned int", "1"},
		{"1ul", "unsigned long", "1"},
		{"'a'", "int", "97"}, // dtrace types character constants as integers
		{"'ab'", "int", "24930"},
		{"-1 + 2u", "unsigned int", "1"},
		{"1 << 40", "int", "1099511627776"}, // dtrace folds in 64 bits
		{"1L << 40", "long", "1099511627776"},
		{"7 / 2", "int", "3"},
		{"-7 % 3", "int", "-1"},
		{"10 > 3 && 2 < 1", "int", "0"},
		{"(char)300", "char", "44"},
		{"(unsigned char)-1", "unsigned char", "255"},
		{"sizeof (long)", "size_t", "8"},
		{"sizeof (\"abc\")", "size_t", "4"},
		{"\"abc\"", "string", "abc"},
		{"timestamp", "uint64_t", ""},
		{"arg0 + 1", "int64_t", ""},
		{"pid", "pid_t", ""},
		{"timestamp - 1", "uint64_t", ""},
		{"execname", "string", ""},
		{"execname == \"x\"", "int", ""},
		{"strlen(\"ab\")", "size_t", ""},
		{"arg0 ? \"a\" : \"b\"", "string", ""},
		{"(char *)0 + 1", "char *", ""},
		{"(int *)8 - (int *)0", "ptrdiff_t", ""},
		{"stack()", "stack", ""},
		{"sym(arg0)", "_symaddr", ""},
		{"NULL", "long", "0"},
		{"!5", "int", "0"},
		{"~0u", "unsigned int", "18446744073709551615"},
		{"-1u", "unsigned int", "4294967295"},
		{"(int)4294967296", "int", "0"},
		{"(long)-1", "long", "-1"},
		{"1 ? 2 : 3L", "long", "2"},
	}
	for _, tt := range tests {
		src := "BEGIN { x = " + tt.expr + "; }"
		info, err := checkSrc(t, src, nil)
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err.(ErrorList)[0].Tagged())
			continue
		}
		st := info.Clauses[0].Body.List[0].(*syntax.ExprStmt)
		rhs := st.X.(*syntax.AssignExpr).Y
		tv := info.Types[rhs]
		val := ""
		if tv.Value != nil {
			if tv.Value.IsStr {
				val = tv.Value.Str
			} else {
				val = strconv.FormatInt(tv.Value.Int, 10)
				if !types.IsSigned(tv.Type) {
					val = strconv.FormatUint(uint64(tv.Value.Int), 10)
				}
			}
		}
		if got := types.TypeString(tv.Type); got != tt.typ || val != tt.val {
			t.Errorf("%s: %s %q, want %s %q", tt.expr, got, val, tt.typ, tt.val)
		}
	}
}

// TestArgXlators checks translated probe arguments.
func TestArgXlators(t *testing.T) {
	k := newFakeKernel()
	src := `struct info { int pid; int ppid; };
translator struct info < struct task_struct *T > { pid = T->pid; };
BEGIN { trace(args[0]->pid); }
END { trace(args[0]->ppid); }`
	conf := &Config{Kernel: k, ProbeArgs: func(d string) *ProbeInfo {
		return &ProbeInfo{Name: "p:::" + d, Args: []types.Type{types.NewPointer(k.task)}, XArgs: []string{"struct info *"}}
	}}
	info, err := checkSrc(t, src, conf)
	if err == nil {
		t.Fatal("want D_XLATE_NOCONV for ppid")
	}
	if e := err.(ErrorList)[0]; e.Tag != D_XLATE_NOCONV || !strings.Contains(e.Msg, "ppid") {
		t.Errorf("got %s", e.Tagged())
	}
	if len(info.ArgXlators) != 2 {
		t.Errorf("%d ArgXlators recorded", len(info.ArgXlators))
	}
	_, err = checkSrc(t, "BEGIN { trace(args[0]->pid); }", conf)
	if err == nil || err.(ErrorList)[0].Tag != D_ARGS_XLATOR {
		t.Errorf("got %v, want D_ARGS_XLATOR", err)
	}
}

// TestProvider checks provider definitions.
func TestProvider(t *testing.T) {
	src := "provider app { probe start(int a, char *b) : (char *b, int a); probe done__now(); };"
	info, err := checkSrc(t, src, nil)
	if err != nil {
		t.Fatal(err.(ErrorList)[0].Tagged())
	}
	if len(info.Providers) != 1 || len(info.Providers[0].Probes) != 2 {
		t.Fatalf("providers: %+v", info.Providers)
	}
	p := info.Providers[0].Probes[0]
	if len(p.Args) != 2 || !types.IsCharPointer(p.XArgs[0]) || p.XMap[0] != 1 || p.XMap[1] != 0 {
		t.Errorf("probe start: %+v", p)
	}
	if q := info.Providers[0].Probes[1]; q.Name != "done-now" || len(q.Args) != 0 {
		t.Errorf("probe done__now: %+v", q)
	}
}

// TestVersion checks that the version option hides newer builtins.
func TestVersion(t *testing.T) {
	if _, err := checkSrc(t, `BEGIN { trace(strstr("ab", "b")); }`, nil); err != nil {
		t.Errorf("latest version: %v", err)
	}
	if _, err := checkSrc(t, `BEGIN { trace(strstr("ab", "b")); }`, &Config{Version: version(1, 0, 0)}); err == nil {
		t.Error("strstr (D 1.1) accepted in D 1.0")
	}
	if _, err := checkSrc(t, `BEGIN { trace(strstr("ab", "b")); }`, &Config{Version: version(1, 1, 0)}); err != nil {
		t.Errorf("strstr in D 1.1: %v", err)
	}
	_, err := checkSrc(t, "int strstr;", nil)
	if err == nil || err.(ErrorList)[0].Tag != D_DECL_IDRED {
		t.Errorf("int strstr: got %v, want D_DECL_IDRED", err)
	}
	if _, err := checkSrc(t, "#pragma D option version=1.0\nint strstr;", nil); err != nil {
		t.Errorf("int strstr in D 1.0: %v", err)
	}
}

// TestEmpty checks that an empty program is an error unless Config.Empty.
func TestEmpty(t *testing.T) {
	_, err := checkSrc(t, "", nil)
	if err == nil || err.(ErrorList)[0].Tag != D_EMPTY {
		t.Errorf("empty program: got %v, want D_EMPTY", err)
	}
	if _, err := checkSrc(t, "", &Config{Empty: true}); err != nil {
		t.Errorf("empty program with Empty: %v", err)
	}
}

// TestAttributes checks the stability attributes of clauses and the amin
// minimum.
func TestAttributes(t *testing.T) {
	if a, ok := ParseAttr("evolving/Stable/ISA"); !ok || a != (Attr{Evolving, Stable, ClassISA}) || a.String() != "Evolving/Stable/ISA" {
		t.Errorf("ParseAttr: %v %v", a, ok)
	}
	if _, ok := ParseAttr("Stable/Bogus/Common"); ok {
		t.Error("ParseAttr accepted Bogus")
	}
	stable := Attr{Stable, Stable, ClassCommon}
	conf := &Config{ProviderAttrs: func(p string) *ProviderAttrs {
		if p != "dtrace" {
			return nil
		}
		priv := Attr{Private, Private, ClassUnknown}
		return &ProviderAttrs{Provider: stable, Module: priv, Function: priv, Name: stable, Args: stable}
	}}
	cases := []struct {
		src        string
		desc, stmt Attr
	}{
		{"BEGIN { printf(\"%d\", 2); }", UnstableDescAttr, stable},
		{"dtrace:::BEGIN { trace(curthread); }", stable, Attr{Stable, Private, ClassCommon}},
		{"dtrace:mod::BEGIN { trace(htons(1)); }", Attr{Private, Private, ClassUnknown}, Attr{Evolving, Evolving, ClassCommon}},
		{"dtrace:::BEGIN { trace(probemod); }", stable, Attr{Private, Private, ClassUnknown}},
		{"BEGIN { trace(probemod); }", UnstableDescAttr, UnstableDescAttr},
	}
	for _, tc := range cases {
		info, err := checkSrc(t, tc.src, conf)
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		cl := info.Clauses[len(info.Clauses)-1]
		if cl.DescAttr != tc.desc || cl.StmtAttr != tc.stmt {
			t.Errorf("%s: attributes %v, %v; want %v, %v", tc.src, cl.DescAttr, cl.StmtAttr, tc.desc, tc.stmt)
		}
	}
	_, err := checkSrc(t, "#pragma D option amin=Evolving/Evolving/Common\nBEGIN { exit(0); }", conf)
	if err == nil || err.(ErrorList)[0].Tag != D_ATTR_MIN {
		t.Errorf("amin: got %v, want D_ATTR_MIN", err)
	}
	if _, err := checkSrc(t, "dtrace:::BEGIN { exit(0); }", &Config{AttrMin: &Attr{Evolving, Evolving, ClassCommon}, ProviderAttrs: conf.ProviderAttrs}); err != nil {
		t.Errorf("amin met: %v", err)
	}
}

// TestExternIncomplete checks that an extern may have an incomplete type
// (it names a kernel symbol) while a variable may not.
func TestExternIncomplete(t *testing.T) {
	if _, err := checkSrc(t, "extern enum nosuch e;\nBEGIN { exit(0); }", nil); err != nil {
		t.Errorf("extern of incomplete enum: %v", err)
	}
	_, err := checkSrc(t, "struct nosuch v;\nBEGIN { exit(0); }", nil)
	if err == nil || err.(ErrorList)[0].Tag != D_DECL_INCOMPLETE {
		t.Errorf("variable of incomplete struct: got %v, want D_DECL_INCOMPLETE", err)
	}
}

// literalValue folds integer literals in 64 bits, as the checker folds
// constants; the operators dtrace's parser does not fold are left alone.
func TestLiteralValue(t *testing.T) {
	fold := func(op syntax.Token, x, y uint64, want uint64, ok bool) {
		t.Helper()
		e := &syntax.BinaryExpr{Op: op, X: &syntax.IntLit{Value: x}, Y: &syntax.ParenExpr{X: &syntax.IntLit{Value: y}}}
		if v, k := literalValue(e); v != want || k != ok {
			t.Errorf("%v %v %v = %v, %v; want %v, %v", x, op, y, v, k, want, ok)
		}
	}
	fold(syntax.ADD, 1<<63, 1<<63, 0, true)
	fold(syntax.SUB, 0, 1, ^uint64(0), true)
	fold(syntax.MUL, 1<<32, 1<<32+3, 3<<32, true)
	fold(syntax.SHL, 1, 65, 2, true)
	fold(syntax.XOR, 6, 3, 5, true)
	fold(syntax.QUO, 6, 3, 0, false)
}
