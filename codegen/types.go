package codegen

import (
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/program"
)

// This file holds codegen's own, minimal view of the checker's results.
// Keeping it separate from dlang/check lets the generator be tested with
// hand-built trees and keeps the adapter (check.go) the only place that
// knows the checker's data structures.

// byRef reports whether a value of t is handled through a pointer to its
// bytes (strings, structs, arrays) rather than in a register.
func byRef(t *program.Type) bool {
	return t != nil && (t.Kind == program.TString || t.Kind == program.TStruct || t.Kind == program.TArray)
}

// fieldOf finds a member by name, searching anonymous members too.
func fieldOf(t *program.Type, name string) (program.Field, bool) {
	for _, f := range t.Fields {
		if f.Name == name {
			return f, true
		}
	}
	for _, f := range t.Fields {
		if f.Name == "" && f.Type != nil && f.Type.Kind == program.TStruct {
			if g, ok := fieldOf(f.Type, name); ok {
				g.Offset += f.Offset
				return g, true
			}
		}
	}
	return program.Field{}, false
}

// VarKind is where a variable lives.
type VarKind int

// Variable kinds.
const (
	VarGlobal  VarKind = iota // dt_gvars at Var.Offset
	VarThread                 // self->x: dt_tvars keyed by (tid, id)
	VarClause                 // this->x: scratch
	VarBuiltin                // arg0, timestamp, pid, ...
	VarAssoc                  // global associative array in dt_assoc
	VarTAssoc                 // thread-local associative array (self->a[k])
	VarConst                  // a constant (enumerator, inline of constant)
	VarSymbol                 // a kernel variable at address Value
	VarParam                  // a translator's input: bound to an expression while a member is compiled
	VarFlow                   // flow->x (beyond DTrace): in the thread's dt_flow value
)

// Var is a resolved variable.
type Var struct {
	Name string
	Kind VarKind
	// ID is unique among variables of the same kind; it keys dt_tvars and
	// dt_assoc.
	ID   int
	Type *program.Type
	// Keys are the key types of an associative array.
	Keys []*program.Type
	// Value is the value of a VarConst, the address of a VarSymbol.
	Value int64
	// Module is a VarSymbol's object: vmlinux or a module's name.
	Module string
}

// AggInfo describes one aggregation as the checker resolved it.
type AggInfo struct {
	ID   int
	Name string // without '@'; "" for @
	Func string // count, sum, avg, ...
	Keys []*program.Type
	// Args are the constant parameters of lquantize/llquantize
	// (base/factor, low, high, step/nsteps), after the value.
	Params []int64
}

// Info is what codegen needs from the type checker. The adapter from
// dlang/check implements it; tests implement it directly.
type Info interface {
	// TypeOf returns the type of an expression (after the usual
	// conversions the checker applied: the type the value has).
	TypeOf(e syntax.Expr) *program.Type
	// VarOf resolves an identifier, self->/this-> reference, or the X of an
	// associative array IndexExpr.
	VarOf(e syntax.Expr) *Var
	// ConstOf returns the value of an integer constant expression.
	ConstOf(e syntax.Expr) (int64, bool)
	// AggOf resolves an aggregation reference (the AggExpr on the left of
	// an aggregating assignment, or an argument of printa/clear/...).
	AggOf(e *syntax.AggExpr) *AggInfo
	// TypeOfName resolves a type written in a cast or sizeof.
	TypeOfName(t *syntax.TypeName) *program.Type
	// StrConstOf returns the value of a constant string expression (a
	// literal, a $$1 macro argument, a string inline).
	StrConstOf(e syntax.Expr) (string, bool)
	// Expand returns the expression an identifier stands for when it
	// names a non-constant inline, else nil.
	Expand(e syntax.Expr) syntax.Expr
}

// DeclInfo is implemented by an Info that knows the global and
// clause-local scalar variables the program declares (`int x;`,
// `this char c;`); the adapter from dlang/check does.
type DeclInfo interface {
	Declared() []*Var
}

// XlateInfo is implemented by an Info that knows translators (the
// checker's adapter does). Without it, translations fail to compile.
// InlineInfo is implemented by Infos that know inlines with parameters,
// used as f[x, y] (io.d's fds[fd]).
type InlineInfo interface {
	// InlineCall resolves such a use: the inline's value expression and
	// its parameters, which the use binds to its index expressions.
	InlineCall(e *syntax.IndexExpr) (value syntax.Expr, params []*Var, ok bool)
}

type XlateInfo interface {
	// XlateMember resolves a member selected from a translated value
	// (xlate<T>(x).m, xlate<T *>(p)->m, an inline defined as one, a
	// translated probe argument): the translator's expression for the
	// member, the translator's parameter, and the input expression the
	// parameter stands for.
	XlateMember(e *syntax.MemberExpr) (value syntax.Expr, param *Var, input syntax.Expr, ok bool)
	// XlateOf resolves a translation as a whole (an XlateExpr, or a
	// translated args[i]): every member's expression by output member
	// name, the parameter, and the input expression.
	XlateOf(e syntax.Expr) (members map[string]syntax.Expr, param *Var, input syntax.Expr, ok bool)
	// BuiltinXlate finds the translator from the kernel's struct
	// task_struct * to the type named out and returns its expression for
	// member (builtins such as ppid are defined by the D library's
	// translators applied to curthread).
	BuiltinXlate(out, member string) (value syntax.Expr, param *Var, ok bool)
}
