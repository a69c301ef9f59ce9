// Package check type-checks D programs: it resolves identifiers, gives
// every expression a type (and a value when it is constant), numbers
// variables and aggregations, applies dtrace's rules for actions,
// subroutines and declarations, and reports errors with dtrace's D_* tags
// and wording, on the lines dtrace reports them.
//
// Usage:
//
//	info, err := check.Check(fset, progs, &check.Config{MacroArgs: args, Source: src})
//	if err != nil {
//		first := err.(check.ErrorList)[0] // what dtrace reports
//		fmt.Println(first.Tagged())     // [D_IDENT_UNDEF] line 3: ...
//	}
//
// Results live in side tables of Info keyed by AST nodes (see go/types):
//
//   - Info.Types: type and constant value of every expression. Constants are
//     folded as dtrace's parser folds them (64-bit values, not truncated
//     to the nominal type except by narrowing casts and negated unsigned
//     constants; sizeof, offsetof, enumerators, macro arguments, string
//     literals, inline values); a constant division by zero is D_DIV_ZERO.
//     TypeAndValue.Alloca marks pointers into alloca()ed scratch memory.
//   - Info.Uses: what each Ident, ScopedVar, AggExpr and MacroVar names.
//     An *Inline use expands to Inline.Value; an inline with parameters
//     is used as f[x, y] and binds Inline.Params (ParamVar) to the index
//     expressions. A translator's parameter is a ParamVar too.
//   - Info.Calls: the *Func each call invokes; codegen switches on Func.Name.
//   - Info.Formats: the parsed format of printf, printa, system, freopen.
//   - Info.Members: the member a . or -> selects, with its bit offset, and
//     the translator when the operand is translated.
//   - Info.TypeNames: the type of each type name in an expression.
//   - Info.Vars, Info.Aggs: variables (ID dense per VarKind) and
//     aggregations (ID dense from 0) with their types, key types, sizes and
//     lquantize/llquantize parameters.
//   - Info.Clauses: per clause, the expanded probe descriptions, predicate,
//     body, and the variables and aggregations it uses.
//   - Info.Providers: provider definitions with native and translated
//     argument types (USDT, -h, -G).
//
// Types follow dtrace: arg0..arg9 are int64_t, timestamp is uint64_t,
// comparisons and logical operators are int, integer constants take the
// first of int, unsigned int, long, ... their value and suffix allow,
// string-valued expressions have a *types.String type of Info.StrSize
// bytes. Kernel types come from Config.Kernel; without it they are opaque
// placeholders (types.KindOpaque) that the checker accepts wherever it
// cannot tell.
//
// Order of checking, as in dtrace: each program's declarations, inlines,
// translators and pragmas first (dtrace's parser processes them as it
// reads them), then its clauses in order. In a clause the actions are
// checked before the predicate (with dtrace's retry, predicate first, when
// the actions use something undefined), and the rules dtrace applies while
// generating code (action order after speculate/commit, printf formats,
// stack sizes, lquantize parameters, ...) run after the clause is checked.
// Checking stops at the first error, as dtrace does.
//
// D library files are programs like any other: pass them first and set
// Config.LibraryPrograms. Package dlib holds dtrace's library files
// (signals, errno, uregs indexes, fault codes, cpuinfo_t, procfs...) and
// loads them; TypeNames tells the parser their typedef names and the
// kernel's.
// Config.Source lets errors land on the lines dtrace reports.
//
// Record layouts are computed by codegen from these tables.
//
// Contract changes since the first version: Config.Format was removed
// (formats are checked with package format); Config.ProbeArgs returns a
// *ProbeInfo (with translated argument types by name, XArgs); Info
// gained Formats, TypeNames, ArgXlators and Providers; Member gained
// Xlator; Translator gained ParamVar; VarKind gained ParamVar; Inline
// gained Params; TypeAndValue and Var gained Alloca.
package check
