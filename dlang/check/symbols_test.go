package check_test

import (
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/ktypes"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
	"github.com/dtrace-go/dtrace/dlib"
)

// symKallsyms is a kernel symbol table as Debian's 6.12 has it: data
// symbols that BTF does not type, a static variable named x, a module's
// variable.
const symKallsyms = `ffffffff81001000 T schedule
ffffffffa2b96100 D linux_banner
ffffffffa36079c0 D jiffies
ffffffffa36079c0 D jiffies_64
ffffffffa3867220 D nr_cpu_ids
ffffffffa3eb8fe8 d x
ffffffffa41d2bc8 B max_pfn
ffffffffc0002000 d modvar	[dummy]
`

// symKernel is a kernel with symKallsyms and no BTF.
func symKernel() *ktypes.Types {
	return ktypes.New(ktypes.Source{Symbols: func() (*ktypes.Symbols, error) {
		return ktypes.ParseKallsyms(strings.NewReader(symKallsyms))
	}})
}

// checkSym checks "BEGIN { trace(expr); }" after decls, with the D
// library's kvars.d when lib is set, and returns the type and kernel
// symbol of the traced expression, or the first error.
func checkSym(t *testing.T, decls, expr string, lib bool) (types.Type, *check.Symbol, *check.Error) {
	t.Helper()
	k := symKernel()
	fset := syntax.NewFileSet()
	var progs []*syntax.Program
	if lib {
		var srcs []dlib.Source
		for _, s := range dlib.Sources() {
			if s.Name == "kvars.d" {
				srcs = append(srcs, s)
			}
		}
		l := dlib.LoadSources(fset, &check.Config{Kernel: k}, k.IsTypeName, srcs)
		if len(l.Programs) != 1 {
			t.Fatalf("kvars.d did not load: %v", l.Dropped)
		}
		progs = l.Programs
	}
	src := decls + " BEGIN { trace(" + expr + "); }"
	p, err := syntax.Parse(fset, "t.d", []byte(src), 0)
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	info, err := check.Check(fset, append(progs, p), &check.Config{Kernel: k, LibraryPrograms: len(progs)})
	if err != nil {
		return nil, nil, err.(check.ErrorList)[0]
	}
	for e := range info.Types {
		call, ok := e.(*syntax.CallExpr)
		if !ok || len(call.Args) != 1 || call.Span.From < p.Span.From {
			continue
		}
		arg := call.Args[0]
		var sym *check.Symbol
		syntax.Inspect(arg, func(n syntax.Node) bool {
			if id, ok := n.(*syntax.Ident); ok {
				if s, ok := info.Uses[id].(*check.Symbol); ok {
					sym = s
				}
			}
			return true
		})
		return info.Types[arg].Type, sym, nil
	}
	t.Fatalf("%q: no trace() call checked", src)
	return nil, nil, nil
}

// Kernel variables take their type from the kernel's BTF (none here),
// then an extern declaration, the program's or the D library's; without
// one, only their address may be taken.
func TestKernelVariableTypes(t *testing.T) {
	tests := []struct {
		decls, expr string
		lib         bool
		typ         string // "" when an error is wanted
		addr        uint64
		err         string // [TAG] message
	}{
		{"", "`max_pfn", true, "unsigned long", 0xffffffffa41d2bc8, ""},
		{"", "`nr_cpu_ids", true, "unsigned int", 0xffffffffa3867220, ""},
		{"", "nr_cpu_ids", true, "unsigned int", 0xffffffffa3867220, ""},
		{"", "vmlinux`jiffies", true, "volatile unsigned long", 0xffffffffa36079c0, ""},
		{"", "`jiffies_64", true, "uint64_t", 0xffffffffa36079c0, ""},
		{"", "stringof(`linux_banner)", true, "string", 0xffffffffa2b96100, ""},
		{"", "`linux_banner[0]", true, "const char", 0xffffffffa2b96100, ""},
		// A program's extern types the symbol, backquoted or not.
		{"extern int nr_cpu_ids;", "`nr_cpu_ids", false, "int", 0xffffffffa3867220, ""},
		{"extern int nr_cpu_ids;", "nr_cpu_ids", false, "int", 0xffffffffa3867220, ""},
		{"extern long modvar;", "dummy`modvar", false, "long", 0xffffffffc0002000, ""},
		// The program's declaration wins over the library's.
		{"extern long max_pfn;", "`max_pfn", true, "long", 0xffffffffa41d2bc8, ""},
		// Code is uintptr_t, as dtrace has it.
		{"", "`schedule", false, "uintptr_t", 0xffffffff81001000, ""},
		// Without a type the address may be taken, the value not read.
		{"", "&`max_pfn", false, "uintptr_t *", 0xffffffffa41d2bc8, ""},
		{"", "(string)&`linux_banner", false, "string", 0xffffffffa2b96100, ""},
		{"", "`max_pfn", false, "", 0,
			"[D_SYM_NOTYPES] line 1: no symbolic type information is available for vmlinux`max_pfn: No type information available for symbol"},
		{"", "`nr_cpu_ids + 1", false, "", 0,
			"[D_SYM_NOTYPES] line 1: no symbolic type information is available for vmlinux`nr_cpu_ids: No type information available for symbol"},
		// A local symbol answers only to a backquote.
		{"", "x", true, "", 0, "[D_IDENT_UNDEF] line 1: failed to resolve x: Unknown variable name"},
		{"", "`x", false, "", 0,
			"[D_SYM_NOTYPES] line 1: no symbolic type information is available for vmlinux`x: No type information available for symbol"},
		{"", "&`x", false, "uintptr_t *", 0xffffffffa3eb8fe8, ""},
		{"extern int x;", "`x", false, "int", 0xffffffffa3eb8fe8, ""},
		// The library's externs type symbols but declare no identifiers.
		{"", "crashing_cpu", true, "", 0, "[D_IDENT_UNDEF] line 1: failed to resolve crashing_cpu: Unknown variable name"},
		{"", "`nosuch", true, "", 0, "[D_IDENT_UNDEF] line 1: failed to resolve `nosuch: Unknown symbol name"},
	}
	for _, tt := range tests {
		typ, sym, err := checkSym(t, tt.decls, tt.expr, tt.lib)
		name := tt.decls + " " + tt.expr
		if tt.err != "" {
			if err == nil || err.Tagged() != tt.err {
				t.Errorf("%s: error %v, want %s", name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %s", name, err.Tagged())
			continue
		}
		if got := types.TypeString(typ); got != tt.typ {
			t.Errorf("%s: type %s, want %s", name, got, tt.typ)
		}
		if sym == nil || sym.Addr != tt.addr {
			t.Errorf("%s: symbol %+v, want address %#x", name, sym, tt.addr)
		}
	}
}
