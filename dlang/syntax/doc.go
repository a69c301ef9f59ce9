// Package syntax holds the D language's tokens, scanner, parser, syntax
// tree, positions and a debug printer.
//
// # Scanner modes
//
// D is scanned differently in different places, as in dtrace's dt_lex.l,
// and the scanner keeps an explicit mode:
//
//   - outer mode (dt_lex.l's S2) is where a program starts and where the
//     parser returns after each top-level item (a clause's closing brace,
//     a declaration's semicolon). A word made of letters, digits and
//     -$:.?*\[]!` is one probe description token (PDESC), so
//     syscall::read:entry, pid$target:a.out:main:entry, profile-97 and
//     ::open*:entry each scan as one token; a description ends at
//     whitespace, "/", "{" or ",". A declaration keyword (int, struct,
//     self, inline, translator, provider, ...) switches to expression
//     mode, and so does a word that names a type: "int*x" begins a
//     declaration, "foo*" a description, unless PSpec is set
//     (-xpspec, or #pragma D option pspec), which makes every word a
//     description. BEGIN, END, ERROR and words holding ":-.?!`" are
//     always descriptions. Digits scan as an integer (a probe id).
//   - expression mode (S0) covers clause bodies, predicates and
//     declarations: C's tokens plus @aggregations, $macros,
//     backquote-scoped names (vmlinux`jiffies) and D's keywords. A "/"
//     closes a predicate when the next non-blank byte is ";", "{", "/" or
//     the end of input, as dtrace decides it.
//   - member mode (SIDENT) lasts for the one name after "." or "->", so
//     that keywords can be member names (x->self).
//
// A line whose first non-blank byte is "#" is a control line, in outer or
// expression mode: #pragma, #error and #ident lines become PragmaDecl
// items, cpp line markers (# 12 "file", #line 12) renumber the lines that
// follow, and #! lines are skipped. Comments are /* */ only.
//
// Whether a name is a type or a variable is decided as dtrace's lexer
// does (id_or_type): after struct/union/enum it is a tag; a declared or
// builtin variable is a variable; a name followed by ++, --, [, =, ; or
// (outside parentheses) "," is a variable; otherwise it is a type if the
// program declared it with typedef, if D predefines it (uint64_t,
// size_t, string, ...) or if Config.IsTypeName says so (kernel types).
//
// # Errors
//
// Parse stops at the first error, as dtrace does, and returns the
// declarations parsed before it together with an ErrorList. Each Error
// has the D_* tag dtrace uses (mostly D_SYNTAX; lexical ones such as
// D_STR_NL, D_CHR_NL, D_CHR_NULL, D_CHR_OFLOW, D_INT_OFLOW, D_INT_DIGIT,
// D_MACRO_UNDEF, D_PRAGCTL_INVAL, D_PRAGMA_INVAL; and the few declaration
// errors dtrace reports while parsing: D_DECL_COMBO, D_DECL_CLASS,
// D_DECL_TYPERED), dtrace's message without tag or line, and the
// position whose line dtrace reports: the line its lexer had reached,
// which for "end of input" is the line after the last newline, and for a
// newline inside a literal the line after it.
//
// Messages follow dtrace's words, including the text it quotes in
// `syntax error near "..."`: the offending token, except that after a
// name dtrace had to peek past, it quotes the rest of that line (its
// lexer's lookahead leaves yytext unterminated), e.g.
// `syntax error near "new_int;"`. Error() formats "line N: msg" for a
// file and the bare message for text without a file name (-n), which is
// how dtrace words them; the caller adds "dtrace: failed to compile
// script x.d: " and, under -xerrtags, "[TAG] ".
//
// # Entry points
//
// Parse reads a script (-s); ParseProbeSpec reads -n text, where a clause
// may be bare descriptions and descriptions are never type names;
// Config.Parse does either with hooks for kernel type names
// (IsTypeName), library identifiers (IsIdent), macro arguments
// (MacroArg) and pragmas (Directive). Config.ParseType and
// Config.ParseExpr read a type name or an expression given as text, such
// as a provider's argument types. Inspect walks a tree; Fprint and String
// give the stable text form tests compare. Beyond dtrace-utils, clause bodies may
// hold if/else statements (illumos D): `if (c) stmt-or-block [else
// stmt-or-block]`.
//
// Semantic checks are the checker's, except where dtrace makes them while
// parsing and their order against syntax errors shows: macro variables
// ($foo undefined), macro arguments when Config.MacroArg is set, and
// control lines when Config.Directive is set.
package syntax
