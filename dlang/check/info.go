package check

import (
	"strings"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
	"github.com/dtrace-go/dtrace/format"
)

// Config holds what checking needs from outside the program text.
type Config struct {
	// MacroArgs holds the macro arguments: MacroArgs[0] is $0 (the script
	// name) and MacroArgs[i] is $i.
	MacroArgs []string
	// Macros holds the values of the named macro variables: "target",
	// "pid", "ppid", "pgid", "sid", "uid", "gid", "euid", "egid", "projid",
	// "taskid". A missing name is undefined (D_MACRO_UNDEF), except that
	// $target is 0 when unset.
	Macros map[string]int64
	// StrSize is the strsize option (the size of D strings); 0 means 256.
	StrSize int64
	// DefaultArgs (-xdefaultargs) makes unset $N macro arguments 0 (or "").
	DefaultArgs bool
	// ArgRef (-xargref) permits macro arguments that the program does
	// not reference (otherwise D_MACRO_UNUSED).
	ArgRef bool
	// Destructive (-w) permits destructive actions; without it they are
	// D_ACT_DESTR... rejected as dtrace does.
	Destructive bool
	// Kernel looks up kernel types and symbols (nil: none; kernel types
	// then become opaque placeholders and kernel symbols are undefined).
	Kernel Kernel
	// ProbeArgs describes the probes a description (macros expanded)
	// matches, for args[]; a nil result or a nil ProbeArgs: unknown, and
	// args[N] then has an opaque type that the checker accepts anywhere
	// (codegen treats it as a 64-bit integer).
	ProbeArgs func(desc string) *ProbeInfo
	// ScratchSize is the scratchsize option, for alloca() limits (0: no
	// limit checked).
	ScratchSize int64
	// Source returns the text of a file of the FileSet (nil if unknown).
	// With it, errors are placed where dtrace reports them: on the line of
	// the token after the offending construct. nil: at the construct.
	Source func(filename string) []byte
	// LibraryPrograms is the number of leading programs that are D
	// libraries (which may use #pragma D depends_on library).
	LibraryPrograms int
	// Pragma receives `#pragma D option name=value` (value "" for a bare
	// option name). An error becomes D_PRAGMA_OPTSET with its text. nil:
	// options pragmas are accepted and ignored.
	Pragma func(name, value string) error
	// Version is the D version the user's programs are written in (the
	// version option), encoded as major<<24 | minor<<12 | micro:
	// builtin variables and functions introduced after it are unknown
	// names. 0 means the latest. `#pragma D option version=V` in a
	// program reduces it further.
	Version uint32
	// AttrMin (the amin option) is the least stability attributes a
	// clause's probe descriptions may have (D_ATTR_MIN); nil: no minimum.
	// `#pragma D option amin=...` sets it too.
	AttrMin *Attr
	// ProviderAttrs gives a provider's stability attributes, for the
	// attributes of probe descriptions; nil (or a nil result): Unstable.
	ProviderAttrs func(provider string) *ProviderAttrs
	// Empty (-xempty) permits a program with no declarations or clauses
	// (otherwise D_EMPTY).
	Empty bool
}

// ProbeInfo is what the checker needs to know about the probes a clause
// is enabled on.
type ProbeInfo struct {
	// Name is the full name of the first matching probe,
	// "provider:module:function:name", as dtrace quotes it in messages.
	Name string
	// Args are the native types of args[0], args[1], ...: what the probe
	// passes.
	Args []types.Type
	// XArgs, when not nil, holds for each argument the name of the type a
	// D program sees ("psinfo_t *", "struct info *"), or "" when it is the
	// native type. The checker resolves the names in the program's scope
	// (D libraries included) and applies the translator from the native
	// type, recorded in Info.ArgXlators.
	XArgs []string
}

// Kernel gives the checker the kernel's types and symbols.
type Kernel interface {
	types.Lookup
	// LookupSymbol finds a kernel symbol (a variable) by module and name;
	// module "" searches every module. Of several of one name it should
	// return a global symbol rather than a local one.
	LookupSymbol(module, name string) (*Symbol, bool)
}

// Info is the result of checking: side tables keyed by AST nodes, plus the
// program's variables, aggregations, translators and clauses. The AST is
// never modified.
type Info struct {
	// Types gives the type (and constant value, if any) of every checked
	// expression, including identifiers and parenthesized expressions.
	Types map[syntax.Expr]TypeAndValue
	// Uses maps each name reference to what it names: *syntax.Ident,
	// *syntax.ScopedVar, *syntax.AggExpr and *syntax.MacroVar nodes to a
	// *Var, *Builtin, *Agg, *EnumConst, *Inline, *Macro or *Symbol.
	Uses map[syntax.Expr]Object
	// Defs maps declarators of variables and inlines to the object they
	// declare.
	Defs map[*syntax.Declarator]Object
	// Calls maps each call to the subroutine, action or aggregating
	// function it invokes.
	Calls map[*syntax.CallExpr]*Func
	// Members maps each x.m and x->m to the member it selects.
	Members map[*syntax.MemberExpr]*Member
	// Formats maps printf, printa, system and freopen calls with a
	// constant format string to the parsed format.
	Formats map[*syntax.CallExpr]*format.Format
	// TypeNames gives the type of every type name written in an
	// expression (casts, sizeof, offsetof, xlate).
	TypeNames map[*syntax.TypeName]types.Type
	// ArgXlators maps args[i] references whose probe argument is
	// translated (ProbeInfo.Native) to the translator to apply.
	ArgXlators map[*syntax.IndexExpr]*Translator
	// Xlates maps each xlate<T>(x) to the translator it applies.
	Xlates map[*syntax.XlateExpr]*Translator
	// Vars lists every global, thread-local and clause-local variable, in
	// order of first appearance. Var.ID numbers them per Kind from 0.
	Vars []*Var
	// Aggs lists the aggregations, indexed by Agg.ID.
	Aggs []*Agg
	// Translators lists the translators the program declares.
	Translators []*Translator
	// Clauses lists the probe clauses in program order.
	Clauses []*Clause
	// Providers lists the provider definitions (for USDT, -h and -G).
	Providers []*Provider
	// StrSize is the effective string size.
	StrSize int64
	// Scope holds the types the program declared (module "D").
	Scope *types.Scope
}

// TypeAndValue is the type of an expression and, when the expression is
// constant, its value.
type TypeAndValue struct {
	Type  types.Type
	Value *Const // nil unless constant
	// Lvalue reports whether the expression designates storage that may be
	// assigned (a variable, *p, a member of an lvalue, a[i]).
	Lvalue bool
	// Alloca reports a pointer into alloca()ed scratch memory (from
	// alloca() or copyin(), through casts, pointer arithmetic and
	// variables that hold such pointers).
	Alloca bool
}

// Const is a constant value: an integer (Int holds its bits; interpret
// them with the expression's type: signed or unsigned, of its size) or a
// string.
type Const struct {
	Int   int64
	Str   string
	IsStr bool
}

// Object is what a name resolves to: *Var, *Builtin, *Agg, *EnumConst,
// *Inline, *Macro or *Symbol.
type Object interface {
	object()
}

// VarKind is the storage class of a D variable.
type VarKind int

// Kinds of variables.
const (
	GlobalVar VarKind = iota // x, a[k]
	ThreadVar                // self->x, self->a[k]
	LocalVar                 // this->x
	ParamVar                 // a parameter of an inline or a translator's input
	FlowVar                  // flow->x (beyond DTrace): follows the unit of work
)

// Var is a D variable: global, thread-local or clause-local, scalar or
// associative array.
type Var struct {
	Name string
	Kind VarKind
	ID   int // dense per Kind, from 0
	// Type is the type of the value.
	Type types.Type
	// Keys is non-nil for an associative array: the key types.
	Keys []types.Type
	// Size is the storage size of one value in bytes.
	Size int64
	// Pos is where the variable was first declared or used.
	Pos syntax.Pos
	// Declared reports an explicit declaration (`int x;`, `self int x;`).
	Declared bool
	// Alloca reports a variable that holds pointers into alloca()ed
	// scratch memory.
	Alloca bool
}

// Builtin is a builtin variable: arg0..arg9, args, execname, pid,
// timestamp, curthread, probefunc, uregs...
type Builtin struct {
	Name string
	Type types.Type
	// Array is set for args[] and uregs[], which are indexed.
	Array bool
}

// Agg is an aggregation.
type Agg struct {
	Name string // without '@'; "" for the anonymous @
	ID   int
	// Func is the aggregating function: "count", "sum", "avg", "min",
	// "max", "stddev", "quantize", "lquantize", "llquantize".
	Func string
	// Keys are the key types (none for a scalar aggregation).
	Keys []types.Type
	// Arg is the type of the aggregated value (nil for count()).
	Arg types.Type
	// Params holds the constant parameters: lquantize base, limit, step;
	// llquantize factor, low, high, nsteps.
	Params []int64
	Pos    syntax.Pos
}

// EnumConst is an enumerator used as a constant.
type EnumConst struct {
	Name  string
	Value int64
	Enum  *types.Enum
}

// Inline is an inline definition (`inline int X = expr;`). References
// expand to Value, already checked (its types are in Info.Types). An
// inline with parameters (`inline int f[int a, int b] = a + b;`) is used
// as f[x, y]: Value refers to Params (ParamVar variables) which the
// reference binds to its index expressions.
type Inline struct {
	Name   string
	Type   types.Type
	Value  syntax.Expr
	Params []*Var
	Pos    syntax.Pos
}

// Macro is a macro variable reference ($1, $$1, $target, ...). Its value is
// the constant in Info.Types.
type Macro struct {
	Name   string
	Quoted bool
}

// Symbol is a kernel symbol (a variable) found through Config.Kernel.
type Symbol struct {
	Module string
	Name   string
	Addr   uint64
	// Type is the type of the symbol's object; nil when the kernel's
	// type data does not describe it (BTF describes only per-CPU
	// variables), and the checker then takes it from an extern
	// declaration of the program or the D library.
	Type types.Type
	// Local is set for a symbol local to its object file (static in C,
	// a lowercase kallsyms type letter): only a backquoted name may
	// refer to one, never a bare identifier.
	Local bool
}

// FuncKind tells subroutines from actions and aggregating functions.
type FuncKind int

// Kinds of functions.
const (
	Subroutine FuncKind = iota // computes a value in the probe context
	Action                     // records data or asks the consumer to act
	AggFunc                    // aggregating function, only as @x = f(...)
)

// Func is a D subroutine, action or aggregating function.
type Func struct {
	Name string
	Kind FuncKind
	// Proto is the prototype as dtrace writes it, e.g. "string(const char *, int, [int])".
	Proto string
	// Result is the result type.
	Result types.Type
	// Destructive reports a destructive action (needs -w).
	Destructive bool
}

// Member is a selected struct or union member.
type Member struct {
	Struct *types.Struct
	Field  *types.Field
	// Offset is the member's offset in bits from the start of the
	// outermost struct being selected from (anonymous members included).
	Offset int64
	// Xlator is set when the operand is a translated value (xlate<T>(x),
	// or an inline defined as one): the member's value is then
	// Xlator.Member[name].Value with the translator's parameter bound to
	// the xlate operand.
	Xlator *Translator
}

// Translator is a translator declaration.
type Translator struct {
	Out   types.Type // struct or union (or pointer target) produced
	In    types.Type
	Param string
	// ParamVar is the input parameter as member expressions use it (Uses
	// maps the parameter's identifiers to it); xlate binds it.
	ParamVar *Var
	Decl     *syntax.TranslatorDecl
	Member   map[string]*syntax.XlateMember
	ID       int
}

// Provider is a provider definition: `provider p { probe x(int, char *); };`.
type Provider struct {
	Name   string
	Probes []*ProviderProbe
	Decl   *syntax.ProviderDecl
}

// ProviderProbe is one probe of a provider definition.
type ProviderProbe struct {
	Name string
	// Args are the native argument types (what the program passes).
	Args []types.Type
	// XArgs are the argument types D programs see, and XMap[i] is the
	// native argument that args[i] comes from. Without a translated
	// prototype XArgs equals Args and XMap is the identity.
	XArgs []types.Type
	XMap  []int
}

// Clause is one probe clause (an ECB) after checking.
type Clause struct {
	Index int
	Decl  *syntax.ProbeClause
	// Probes are the probe descriptions with macro variables expanded.
	Probes []string
	Pred   syntax.Expr // nil if none
	Body   *syntax.BlockStmt
	// Locals are the this-> variables the clause uses.
	Locals []*Var
	// Vars are the global and thread-local variables the clause uses.
	Vars []*Var
	// Aggs are the aggregations the clause updates or names.
	Aggs []*Agg
	// Speculative reports a call to speculate().
	Speculative bool
	// Destructive reports a destructive action.
	Destructive bool
	// DescAttr are the stability attributes of the clause's probe
	// descriptions, StmtAttr those of its predicate and actions (what
	// dtrace -v reports, their minimum over the clauses).
	DescAttr, StmtAttr Attr
}

func (*Var) object()       {}
func (*Builtin) object()   {}
func (*Agg) object()       {}
func (*EnumConst) object() {}
func (*Inline) object()    {}
func (*Macro) object()     {}
func (*Symbol) object()    {}

// KernelTypeNames returns a function for syntax.Config.IsTypeName that
// reports the typedef names (possibly module`name) the kernel defines, so
// that the parser reads them as type names, as dtrace's lexer does.
func KernelTypeNames(k Kernel) func(name string) bool {
	return TypeNames(k, nil)
}

// TypeNames is KernelTypeNames that also knows the typedef names declared
// by the given programs (the D library files, parsed first).
func TypeNames(k Kernel, libs []*syntax.Program) func(name string) bool {
	local := map[string]bool{}
	for _, p := range libs {
		if p == nil {
			continue
		}
		for _, d := range p.Decls {
			if d, ok := d.(*syntax.Declaration); ok && d.Specs != nil && d.Specs.Class == syntax.Typedef {
				for _, dr := range d.Decls {
					if dr.Name != nil {
						local[dr.Name.Name] = true
					}
				}
			}
		}
	}
	return func(name string) bool {
		if local[name] {
			return true
		}
		if k == nil {
			return false
		}
		module, n, ok := strings.Cut(name, "`")
		if !ok {
			module, n = "", name
		}
		_, isTypedef := k.LookupType(module, n).(*types.Typedef)
		return isTypedef
	}
}
