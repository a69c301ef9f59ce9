//go:build linux

package codegen

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/kfeature"
	"github.com/dtrace-go/dtrace/program"
)

// argVars returns arg0..arg9 as builtin variables.
func argVars() []*Var {
	var vs []*Var
	for i := 0; i < 10; i++ {
		vs = append(vs, &Var{Name: "arg" + string(rune('0'+i)), Kind: VarBuiltin, Type: program.TypeLong, ID: i})
	}
	return vs
}

// TestDiffIntegerExpressions compares generated code with the Go
// evaluator on random integer expressions over random arguments.
// It runs twice: with ISA v4 forms (movsx, sdiv) and with the v3
// sequences that replace them for 6.1, which the host's kernel accepts
// too.
func TestDiffIntegerExpressions(t *testing.T) {
	needBPF(t)
	for _, isa := range []int{4, 3} {
		t.Run(fmt.Sprintf("v%d", isa), func(t *testing.T) { diffIntegerExpressions(t, isa) })
	}
}

func diffIntegerExpressions(t *testing.T, isa int) {
	rnd := rand.New(rand.NewSource(1))
	const rounds, perClause = 25, 40
	for round := 0; round < rounds; round++ {
		ti := newInfo()
		args := argVars()
		var argv []uint64
		for i := 0; i < 10; i++ {
			v := rnd.Uint64()
			switch rnd.Intn(4) {
			case 0:
				v = uint64(rnd.Intn(5)) - 2
			case 1:
				v >>= uint(rnd.Intn(64))
			}
			argv = append(argv, v)
		}
		var exprs []syntax.Expr
		var want, raw []int64
		for len(exprs) < perClause {
			e := ti.randExpr(rnd, 4, args)
			v, ok := ti.eval(e, argv)
			if !ok {
				continue // divides by zero: covered by the fault tests
			}
			exprs = append(exprs, e)
			// trace() records the value with its type's size.
			want = append(want, normTo(v, ti.types[e]))
			raw = append(raw, v)
		}
		var body []syntax.Stmt
		for i, e := range exprs {
			if i%2 == 0 {
				body = append(body, ti.stmt(ti.call("trace", program.TypeVoid, e)))
				continue
			}
			// Store into a variable of another type, then read it back
			// widened: stores must truncate and re-extend.
			vt := intTypes[rnd.Intn(len(intTypes))]
			kinds := []VarKind{VarGlobal, VarThread, VarClause}
			v := &Var{Name: fmt.Sprintf("v%d", i), Kind: kinds[rnd.Intn(3)], ID: i, Type: vt}
			body = append(body, ti.stmt(ti.assign(syntax.ASSIGN, ti.variable(v), e)))
			x := ti.cast(program.TypeLong, ti.variable(v))
			body = append(body, ti.stmt(ti.call("trace", program.TypeVoid, x)))
			want[i] = normTo(raw[i], vt)
		}
		spec, err := GenerateProgram(progOf(ti.clause("BEGIN", nil, body...)), ti, Options{ISA: isa})
		if err != nil {
			t.Fatal(err)
		}
		if isa < 4 {
			noV4(t, spec)
		}
		r := loadSpec(t, spec)
		recs := r.fire(t, argv...)
		if len(recs) != 1 || uint32(len(recs[0])) < spec.Clauses[0].RecordSize {
			t.Fatalf("got %d records (%x), want 1 of %d bytes", len(recs), recs, spec.Clauses[0].RecordSize)
		}
		items := spec.Clauses[0].Records
		for i, e := range exprs {
			got := itemValue(recs[0], items[i])
			if got != want[i] {
				t.Errorf("round %d expr %d (%s): got %d (%#x), want %d (%#x)", round, i, ti.show(e), got, got, want[i], want[i])
			}
		}
		r.close()
	}
}

func TestDumpSmall(t *testing.T) {
	ti := newInfo()
	args := argVars()
	e := ti.bin(syntax.ADD, ti.variable(args[0]), ti.lit(3, program.TypeInt))
	spec, err := GenerateProgram(progOf(ti.clause("BEGIN", nil, ti.stmt(ti.call("trace", program.TypeVoid, e)))), ti, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v", wrapper(spec, 1)[:40])
}

// bothISAs compiles src with ISA v4 forms and with the v3 sequences
// that replace them for 6.1 (checking that none is left), fires BEGIN
// once, and wants want printed each time. A kernel without v4 (6.1)
// runs only the v3 code.
func bothISAs(t *testing.T, src, want string) {
	t.Helper()
	for _, isa := range []int{4, 3} {
		t.Run(fmt.Sprintf("v%d", isa), func(t *testing.T) {
			if isa > kernelISA(t) {
				t.Skipf("the kernel takes ISA v%d", kernelISA(t))
			}
			spec := compileD(t, src, Options{ISA: isa})
			if isa < 4 {
				noV4(t, spec)
			}
			if got := render(t, spec, loadSpec(t, spec).fire(t)); got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// kernelISA is the instruction set the running kernel takes.
func kernelISA(t *testing.T) int {
	needBPF(t)
	return kfeature.Probe().CodegenISA()
}

// noV4 fails unless spec's code is free of ISA v4 instructions.
func noV4(t *testing.T, spec *program.Spec) {
	t.Helper()
	all := append([]asm.Instructions{}, spec.Funcs...)
	for _, c := range spec.Clauses {
		all = append(all, c.Insns)
	}
	for _, insns := range all {
		if i, form := kfeature.FirstV4(insns); i >= 0 {
			t.Fatalf("ISA v3 code has a %s: %v", form, insns[i])
		}
	}
}
