package dtrace

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
)

// treeDump parses and checks src alone and returns the tree option's
// dump for mask.
func treeDump(t *testing.T, src string, mask int64) string {
	t.Helper()
	fset := syntax.NewFileSet()
	ast, err := syntax.Parse(fset, "t.d", []byte(src), 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := &check.Config{}
	info, err := check.Check(fset, []*syntax.Program{ast}, conf)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	dumpTrees(&b, mask, ast, info, conf)
	return b.String()
}

// wantLines reports each line of lines that dump lacks as a whole line.
func wantLines(t *testing.T, pass, dump, lines string) {
	t.Helper()
	for _, l := range strings.Split(lines, "\n") {
		if !strings.Contains(dump, "\n"+l+"\n") {
			t.Errorf("%s lacks %q:\n%s", pass, l, dump)
		}
	}
}

// TestTreeParser1Pass1 runs the printer on misc/tst.parser1's program:
// its pass 1 from the probe description on is what the test expects of
// dtrace-utils (the index of @agg[x, z, "hello"] shows its first key
// only, as dt_node_printr() prints OP2 [).
func TestTreeParser1Pass1(t *testing.T) {
	got := treeDump(t, `
BEGIN
{
	x = 1234;
	printf("%d\n", x);
	z = 32 * (x + 18);
	@agg[x, z, "hello"] = llquantize(x, 2, 3, 5, 2);
	exit(0);
}
`, treeParsed)
	want := `Parse tree (Pass 1):
  PROGRAM attr=[s/s/c]
    CLAUSE attr=[s/s/c]
      PDESC :::BEGIN [0]
    CTXATTR [i/i/u]
    ACTION
      D EXPRESSION attr=[s/s/c]
        OP2 = (type=<-1> attr=[s/s/c] flags=0)
          IDENT x (type=<-1> attr=[s/s/c] flags=0)
          INT 0x4d2 (type=<int> attr=[s/s/c] flags=SIGN,COOK)
      D PRODUCER attr=[s/s/c]
        FUNC printf (type=<-1> attr=[s/s/c] flags=0)
          STRING "%d\n" (type=<string> attr=[s/s/c] flags=COOK,REF,DPTR)
        ,
          IDENT x (type=<-1> attr=[s/s/c] flags=0)
      D EXPRESSION attr=[s/s/c]
        OP2 = (type=<-1> attr=[s/s/c] flags=0)
          IDENT z (type=<-1> attr=[s/s/c] flags=0)
          OP2 * (type=<-1> attr=[s/s/c] flags=0)
            INT 0x20 (type=<int> attr=[s/s/c] flags=SIGN,COOK)
            OP2 + (type=<-1> attr=[s/s/c] flags=0)
              IDENT x (type=<-1> attr=[s/s/c] flags=0)
              INT 0x12 (type=<int> attr=[s/s/c] flags=SIGN,COOK)
      D EXPRESSION attr=[s/s/c]
        OP2 = (type=<-1> attr=[s/s/c] flags=0)
          OP2 [ (type=<-1> attr=[s/s/c] flags=0)
            IDENT @agg (type=<-1> attr=[s/s/c] flags=0)
            IDENT x (type=<-1> attr=[s/s/c] flags=0)
          FUNC llquantize (type=<-1> attr=[s/s/c] flags=0)
            IDENT x (type=<-1> attr=[s/s/c] flags=0)
          ,
            INT 0x2 (type=<int> attr=[s/s/c] flags=SIGN,COOK)
          ,
            INT 0x3 (type=<int> attr=[s/s/c] flags=SIGN,COOK)
          ,
            INT 0x5 (type=<int> attr=[s/s/c] flags=SIGN,COOK)
          ,
            INT 0x2 (type=<int> attr=[s/s/c] flags=SIGN,COOK)
      D PRODUCER attr=[s/s/c]
        FUNC exit (type=<-1> attr=[s/s/c] flags=0)
          INT 0x0 (type=<int> attr=[s/s/c] flags=SIGN,COOK)
`
	if got != want {
		t.Errorf("pass 1:\n%s\nwant:\n%s", got, want)
	}
}

// TestTreePasses checks lines of each pass on another program: constants
// folded by the parser, thread-local and clause-local variables, a
// string variable, a predicate, a keyless aggregation and a ternary.
func TestTreePasses(t *testing.T) {
	src := `BEGIN /pid != 0/ { self->ts = timestamp; this->n = 1 + 2; s = "a"; s = s; @c = count(); v = (long)arg0 > 0 ? 1 : 0; p = 0; }`
	if got := treeDump(t, src, Unset); got != "" {
		t.Errorf("tree unset printed %q", got)
	}
	p1 := treeDump(t, src, treeParsed)
	wantLines(t, "pass 1", p1, `    PREDICATE /
        IDENT pid (type=<-1> attr=[s/s/c] flags=0)
          OP2 -> (type=<-1> attr=[s/s/c] flags=0)
            IDENT self (type=<-1> attr=[s/s/c] flags=0)
          INT 0x3 (type=<int> attr=[s/s/c] flags=SIGN,COOK)
          IDENT @c (type=<-1> attr=[s/s/c] flags=0)
          OP3 (type=<-1> attr=[s/s/c] flags=0)
                TYPE (type=<long> attr=[s/s/c] flags=SIGN,COOK)`)
	begins := func(pass, dump, prefix string) {
		t.Helper()
		if !strings.HasPrefix(dump, prefix) {
			t.Errorf("%s begins:\n%s\nwant:\n%s", pass, dump, prefix)
		}
	}
	p2 := treeDump(t, src, treeChecked)
	begins("pass 2", p2, "Parse tree (Pass 2):\n  CLAUSE attr=[s/s/c]\n    PDESC :::BEGIN [0]\n  CTXATTR [u/u/c]\n")
	// created by its first assignment: DPTR; read later: not.
	// assigned only a literal 0: not normally-assigned.
	wantLines(t, "pass 2", p2, `      VARIABLE pid (type=<pid_t> attr=[s/s/c] flags=SIGN,COOK,LVAL)
      OP2 = (type=<uint64_t> attr=[s/s/c] flags=COOK,WRITE)
        VARIABLE (normally-assigned) self->ts (type=<uint64_t> attr=[s/s/c] flags=COOK,LVAL,WRITE)
        VARIABLE timestamp (type=<uint64_t> attr=[s/s/c] flags=COOK,LVAL)
        VARIABLE (normally-assigned) this->n (type=<int> attr=[s/s/c] flags=SIGN,COOK,LVAL,WRITE)
        VARIABLE (normally-assigned) s (type=<string> attr=[s/s/c] flags=COOK,REF,LVAL,WRITE,DPTR)
        VARIABLE (normally-assigned) s (type=<string> attr=[s/s/c] flags=COOK,REF,LVAL,WRITE)
      AGGREGATE @c attr=[s/s/c] [
        FUNC count (type=<<DYN>> attr=[s/s/c] flags=SIGN,COOK,REF)
        OP3 (type=<int> attr=[s/s/c] flags=SIGN,COOK)
            OP2 ( (type=<long> attr=[s/s/c] flags=SIGN,COOK)
        VARIABLE p (type=<int> attr=[s/s/c] flags=SIGN,COOK,LVAL,WRITE)`)
	p3 := treeDump(t, src, treeCodegen)
	begins("pass 3", p3, "Parse tree (Pass 3):\n  PROGRAM attr=[s/s/c]\n    CLAUSE attr=[s/s/c]\n      PDESC :::BEGIN [0]\n    CTXATTR [u/u/c]\n")
	wantLines(t, "pass 3", p3, "          VARIABLE (normally-assigned) self->ts (type=<uint64_t> attr=[s/s/c] flags=COOK,LVAL,WRITE)")
	all := treeDump(t, src, treeParsed|treeChecked|treeCodegen)
	if all != p1+p2+p3 {
		t.Errorf("tree=7 is not passes 1, 2 and 3 in order:\n%s", all)
	}
}

// TestTreeFolding checks the constants dtrace's parser folds (unary
// minus, a conditional on a constant, an integer cast) and the forms
// cooking gives an index into a pointer and a bare aggregation.
func TestTreeFolding(t *testing.T) {
	src := `enum e { E = 7 };
BEGIN { x = -1; y = 1 ? 2 : 3; z = (char)0x1ff; w = E + 1; p = (int *)alloca(8); q = p[1]; @a = count(); printa(@a); }`
	p1 := treeDump(t, src, treeParsed)
	// an enumerator is an identifier until cooked.
	wantLines(t, "pass 1", p1, `          INT 0xffffffffffffffff (type=<int> attr=[s/s/c] flags=SIGN,COOK)
          INT 0x2 (type=<int> attr=[s/s/c] flags=SIGN,COOK)
          INT 0xffffffffffffffff (type=<char> attr=[s/s/c] flags=SIGN,COOK)
            IDENT E (type=<-1> attr=[s/s/c] flags=0)`)
	if strings.Contains(p1, "OP3") || strings.Contains(p1, "OP1 -") {
		t.Errorf("pass 1 did not fold:\n%s", p1)
	}
	p2 := treeDump(t, src, treeChecked)
	wantLines(t, "pass 2", p2, `          INT 0x7 (type=<enum e> attr=[s/s/c] flags=COOK)
        VARIABLE (alloca-assigned) p (type=<int *> attr=[s/s/c] flags=COOK,LVAL,WRITE,ALLOCA)
          FUNC alloca (type=<void *> attr=[s/s/c] flags=COOK,ALLOCA)
        OP1 * (type=<int> attr=[s/s/c] flags=SIGN,COOK,LVAL)
          OP2 + (type=<int *> attr=[s/s/c] flags=COOK,ALLOCA)
        AGGREGATE @a attr=[s/s/c] [`)
}

// TestTreeHandle compiles through a handle with -x tree=2: a pass 2 dump
// for each probe description of a clause, then dtrace's ERROR clause.
func TestTreeHandle(t *testing.T) {
	var stderr bytes.Buffer
	opts := NewOptions()
	if err := opts.Set("tree", "2"); err != nil {
		t.Fatal(err)
	}
	h, err := Open(opts, Config{Stderr: &stderr})
	if err != nil {
		t.Skip(err)
	}
	defer h.Close()
	if _, err := h.Compile(Source{Name: "t", Text: "BEGIN, END { trace(probename); }", Kind: SpecProgram}); err != nil {
		t.Fatal(err)
	}
	if err := h.DumpErrorProgramTrees(); err != nil {
		t.Fatal(err)
	}
	out := stderr.String()
	if n := strings.Count(out, "Parse tree (Pass 2):\n"); n != 3 {
		t.Errorf("%d pass 2 dumps, want 2 for BEGIN, END and 1 for ERROR:\n%s", n, out)
	}
	if strings.Contains(out, "Pass 1") || strings.Contains(out, "Pass 3") {
		t.Errorf("tree=2 printed other passes:\n%s", out)
	}
	if !strings.Contains(out, "    PDESC dtrace:::ERROR [0]\n") || !strings.Contains(out, "      VARIABLE arg5 (type=<int64_t>") {
		t.Errorf("no ERROR clause dump:\n%s", out)
	}
}
