// Package check type-checks D programs: it resolves identifiers, gives
// every expression a type (and a value when it is constant), numbers
// variables and aggregations, applies dtrace's rules for actions,
// subroutines and declarations, and reports errors with dtrace's D_* tags
// and wording.
//
// Usage:
//
//	info, err := check.Check(fset, progs, &check.Config{MacroArgs: args})
//	if err != nil {
//		first := err.(check.ErrorList)[0] // what dtrace reports
//		fmt.Println(first.Tagged())     // [D_IDENT_UNDEF] line 3: ...
//	}
//
// Results live in side tables of Info keyed by AST nodes (see go/types):
//
//   - Info.Types: type and constant value of every expression. Constants are
//     folded (integers by C's rules, sizeof, offsetof, enumerators, macro
//     arguments, string literals).
//   - Info.Uses: what each Ident, ScopedVar, AggExpr and MacroVar names.
//     An *Inline use expands to Inline.Value.
//   - Info.Calls: the *Func each call invokes; codegen switches on Func.Name.
//   - Info.Members: the member a . or -> selects, with its bit offset.
//   - Info.Vars, Info.Aggs: variables (ID dense per VarKind) and
//     aggregations (ID dense from 0) with their types, key types and sizes.
//   - Info.Clauses: per clause, the expanded probe descriptions, predicate,
//     body, and the variables and aggregations it uses.
//
// Integer expression types follow dtrace: arg0..arg9 are int64_t,
// timestamp is uint64_t, comparisons are int, string comparisons are int,
// and string-valued expressions have a *types.String type of
// Info.StrSize bytes.
//
// Record layouts are computed by codegen from these tables.
//
// Contract changes are noted here: none yet.
package check
