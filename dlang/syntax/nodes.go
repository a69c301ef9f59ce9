package syntax

// This file defines the abstract syntax tree of D. Every node records the
// position of its first token (Pos) and of the byte after its last token
// (End). The checker keeps its results in side tables keyed by node
// pointers and never changes the tree.

// Node is any node of the tree.
type Node interface {
	Pos() Pos
	End() Pos
}

// Span is embedded in nodes to give them Pos and End.
type Span struct {
	From, To Pos
}

// Pos returns the position of the node's first byte.
func (s Span) Pos() Pos { return s.From }

// End returns the position just after the node's last byte.
func (s Span) End() Pos { return s.To }

// ---------------------------------------------------------------------------
// Program and top-level declarations

// Program is one D source (a -s file or a -n/-P/-m/-f/-i description).
type Program struct {
	Span
	File  *File
	Decls []Decl // in source order
}

// Decl is a top-level item: *ProbeClause, *Declaration, *InlineDecl,
// *TranslatorDecl, *ProviderDecl, *PragmaDecl.
type Decl interface {
	Node
	declNode()
}

// ProbeDesc is one probe description as written, e.g. "syscall::read:entry"
// or "BEGIN". Text holds the description with macro variables ($1, $target)
// not yet expanded; the checker expands them.
type ProbeDesc struct {
	Span
	Text string
}

// ProbeClause is `descs /pred/ { body }`. Body is nil when the clause has
// no action list at all (the default action applies); it is non-nil and
// empty for `{}`.
type ProbeClause struct {
	Span
	Descs []*ProbeDesc
	Pred  Expr       // nil if absent
	Body  *BlockStmt // nil if the clause has no braces
}

// PragmaDecl is a `#pragma` line: `#pragma D option quiet`,
// `#pragma D depends_on module x`, `#pragma D attributes ...`,
// `#pragma binding "1.0" name`, `#pragma ident`, and so on. Words holds the
// whitespace-separated words after "#pragma".
type PragmaDecl struct {
	Span
	// Directive is "pragma" for #pragma lines, or the name of another
	// control directive dtrace knows ("error", "ident"). Line markers
	// (# 12 "file", #line) are applied by the scanner and not kept.
	Directive string
	// Words are the words after the directive, as written (a quoted
	// string keeps its quotes).
	Words []string
}

// Declaration is a C-style declaration: `int x;`, `self int y[int];`,
// `struct s { int a; };`, `typedef long t;`, `extern int foo;`,
// `this char *p;`. A declaration with no declarators declares only its type
// (a struct, union or enum tag).
type Declaration struct {
	Span
	Specs *DeclSpecs
	Decls []*Declarator // may be empty
}

// InlineDecl is `inline TYPE NAME = EXPR;` (NAME may have array
// dimensions written like a declarator).
type InlineDecl struct {
	Span
	Specs *DeclSpecs
	Decl  *Declarator
	Value Expr
}

// TranslatorDecl is `translator OUT < IN NAME > { member = expr; ... };`.
type TranslatorDecl struct {
	Span
	Out     *TypeName
	In      *TypeName
	Param   *Ident
	Members []*XlateMember
}

// XlateMember is one `member = expr;` line of a translator.
type XlateMember struct {
	Span
	Name  *Ident
	Value Expr
}

// ProviderDecl is `provider NAME { probe NAME(args) : (xargs); ... };`,
// used by -h and -G.
type ProviderDecl struct {
	Span
	Name   *Ident
	Probes []*ProviderProbe
}

// ProviderProbe is one `probe name(types);` of a provider definition.
type ProviderProbe struct {
	Span
	Name   *Ident
	Params []*Param // native argument types
	XArgs  []*Param // translated argument types after ':' (may be nil)
}

func (*ProbeClause) declNode()    {}
func (*PragmaDecl) declNode()     {}
func (*Declaration) declNode()    {}
func (*InlineDecl) declNode()     {}
func (*TranslatorDecl) declNode() {}
func (*ProviderDecl) declNode()   {}

// ---------------------------------------------------------------------------
// Types as written

// StorageClass is a declaration's storage class or D scope keyword.
type StorageClass int

// Storage classes. Self and This are D's thread-local and clause-local
// scopes; they are written where C has a storage class.
const (
	NoClass StorageClass = iota
	Auto
	Register
	Static
	Extern
	Typedef
	Self
	This
)

// Qualifier bits.
const (
	Const    = 1 << iota
	Volatile // also covers restrict
	Restrict
)

// DeclSpecs is the specifier part of a declaration, cast or type name:
// storage class, qualifiers and the type specifier.
type DeclSpecs struct {
	Span
	Class StorageClass
	Quals int // Const | Volatile | Restrict
	Type  TypeSpec
	// Attrs holds basic-type keywords written together with a struct,
	// union, enum or named type (`unsigned struct s`, `long string`),
	// which dtrace rejects; the checker reports them (D_DECL_SIGNINT,
	// D_DECL_LONGINT, D_DECL_COMBO). nil in valid programs.
	Attrs []string
}

// TypeSpec is the type specifier: *BasicType, *NamedType, *StructType,
// *EnumType.
type TypeSpec interface {
	Node
	typeSpecNode()
}

// BasicType is a run of C basic-type keywords in source order, e.g.
// ["unsigned", "long", "long"], ["char"], ["void"], ["signed"]. The D
// keyword `string` is a NamedType.
type BasicType struct {
	Span
	Words []string
}

// NamedType is a typedef name or D builtin type name (`string`,
// `uint64_t`), optionally scoped to a module with a backquote:
// Module "vmlinux" for "vmlinux`task_struct"... Module is "" when unscoped.
type NamedType struct {
	Span
	Module string
	Name   string
}

// StructType is `struct tag`, `union tag`, or a definition with members.
// Members is nil for a reference (`struct foo`) and non-nil for a
// definition (possibly empty).
type StructType struct {
	Span
	Union   bool
	Module  string // for `struct vmlinux`task_struct`
	Tag     string // "" for an anonymous definition
	Members []*Field
	Defined bool // a body { ... } was written
}

// Field is one member declaration line: `int a, *b, c : 3;`.
type Field struct {
	Span
	Specs *DeclSpecs
	Decls []*Declarator
}

// EnumType is `enum tag` or `enum tag { A, B = 2 }`.
type EnumType struct {
	Span
	Module  string
	Tag     string
	Values  []*Enumerator
	Defined bool
}

// Enumerator is one `NAME [= expr]` of an enum definition.
type Enumerator struct {
	Span
	Name  *Ident
	Value Expr // nil if absent
}

func (*BasicType) typeSpecNode()  {}
func (*NamedType) typeSpecNode()  {}
func (*StructType) typeSpecNode() {}
func (*EnumType) typeSpecNode()   {}

// Declarator is the part of a declaration that names one thing and
// wraps the specifier's type: `*p`, `a[10]`, `(*fp)(int)`, `x : 3`,
// `arr[string, int]`. Name is nil in an abstract declarator (a cast or
// sizeof type, or an unnamed parameter).
type Declarator struct {
	Span
	Name *Ident
	// Type is the chain of derivations applied to the specifier's type,
	// outermost first as C reads them: for `*a[10]` it is
	// Array{10, Pointer{nil}}, an array of 10 pointers. nil means the
	// specifier's type itself.
	Type DeclType
	// BitField is the width after ':' in a struct member; nil otherwise.
	BitField Expr
	// Init is the initializer after '=' (only in inline definitions and
	// enumerations, where D allows them); nil otherwise.
	Init Expr
}

// DeclType is a derivation in a declarator: *PointerDecl, *ArrayDecl,
// *FuncDecl.
type DeclType interface {
	Node
	declTypeNode()
}

// PointerDecl is `*` with qualifiers, applied to Elem (nil = the base type).
type PointerDecl struct {
	Span
	Quals int
	Elem  DeclType
}

// ArrayDecl is `[dims]` applied to Elem. A C array has one dimension that
// is an expression or nil (`[]`). A D associative array declaration has a
// list of key types: `[string, int]`, and Keys is set instead.
type ArrayDecl struct {
	Span
	Len  Expr        // C array length, nil for [] or for an associative array
	Keys []*TypeName // associative array key types, nil for a C array
	// Variadic is set when the key list ends with "..." (an error the
	// checker reports as D_DECL_PROTO_VARARGS).
	Variadic bool
	Elem     DeclType
}

// FuncDecl is a parameter list `(params)` applied to Elem (the result).
type FuncDecl struct {
	Span
	Params   []*Param
	Variadic bool // ends with "..."
	Elem     DeclType
}

// Param is one parameter: a type with an optional name. `void` alone is
// represented by a Param whose Specs is void and Decl has no name/type.
type Param struct {
	Span
	Specs *DeclSpecs
	Decl  *Declarator
}

func (*PointerDecl) declTypeNode() {}
func (*ArrayDecl) declTypeNode()   {}
func (*FuncDecl) declTypeNode()    {}

// TypeName is a type written in an expression: in a cast, sizeof,
// offsetof, xlate, a translator header or an associative array key list.
type TypeName struct {
	Span
	Specs *DeclSpecs
	Decl  *Declarator // abstract; nil when there is no declarator
}

// ---------------------------------------------------------------------------
// Statements

// Stmt is a statement in a clause body: *ExprStmt, *BlockStmt, *IfStmt,
// *EmptyStmt, *DeclStmt.
type Stmt interface {
	Node
	stmtNode()
}

// ExprStmt is `expr;`.
type ExprStmt struct {
	Span
	X Expr
}

// BlockStmt is `{ stmts }`.
type BlockStmt struct {
	Span
	List []Stmt
}

// IfStmt is `if (cond) then [else els]`. Then and Else are blocks or
// single statements.
type IfStmt struct {
	Span
	Cond Expr
	Then Stmt
	Else Stmt // nil if absent
}

// EmptyStmt is a lone `;`.
type EmptyStmt struct {
	Span
}

// DeclStmt is a declaration written inside a clause body.
type DeclStmt struct {
	Span
	Decl *Declaration
}

func (*ExprStmt) stmtNode()  {}
func (*BlockStmt) stmtNode() {}
func (*IfStmt) stmtNode()    {}
func (*EmptyStmt) stmtNode() {}
func (*DeclStmt) stmtNode()  {}

// ---------------------------------------------------------------------------
// Expressions

// Expr is any expression.
type Expr interface {
	Node
	exprNode()
}

// Ident is an identifier: a variable, function, builtin, enumerator,
// inline, or a backquote-scoped kernel symbol (Module`Name; Module is ""
// when unscoped and "`" alone means the kernel's scope — see Scoped).
type Ident struct {
	Span
	Name   string
	Module string // text before the backquote; "" when unscoped
	Scoped bool   // a backquote was written (`` `jiffies `` has Module "")
}

// IntLit is an integer constant (decimal, octal, hex, or a character
// constant), with its suffix. Value holds the bits; the checker gives the
// type from the value and Suffix (u, l, ul, ll, ull) by C's rules.
type IntLit struct {
	Span
	Text   string // as written
	Value  uint64
	Suffix string // lower-cased: "", "u", "l", "ul", "ll", "ull"
	IsChar bool   // a character constant like 'a'
	// Overflow is set when the literal does not fit in 64 bits.
	Overflow bool
}

// FloatLit is a floating-point constant; D accepts it only in a few
// places, the checker reports the rest.
type FloatLit struct {
	Span
	Text string
}

// StringLit is a string constant; Value has escapes processed.
type StringLit struct {
	Span
	Value string
}

// VarScope is the scope keyword of a variable reference.
type VarScope int

// Scopes of D variables written with a keyword prefix.
const (
	ScopeSelf VarScope = iota + 1 // self->x
	ScopeThis                     // this->x
	ScopeFlow                     // flow->x (beyond DTrace: follows the unit of work)
)

// ScopedVar is `self->name`, `this->name` or `flow->name`.
type ScopedVar struct {
	Span
	Scope VarScope
	Name  *Ident
}

// MacroVar is a macro variable: `$1`, `$$1` (Quoted: the argument as a
// string), `$target`, `$pid`, `$0`...
type MacroVar struct {
	Span
	Name   string // "1", "target", "pid", ...
	Quoted bool   // written with $$
}

// AggExpr is an aggregation reference: `@`, `@name`, `@name[keys]`.
// Name is "" for the anonymous aggregation `@`.
type AggExpr struct {
	Span
	Name string
	Keys []Expr // nil if no [...] was written
}

// UnaryExpr is a prefix operator: - + ! ~ * & ++ -- and sizeof/stringof of
// an expression.
type UnaryExpr struct {
	Span
	Op Token
	X  Expr
}

// PostfixExpr is x++ or x--.
type PostfixExpr struct {
	Span
	Op Token // INC or DEC
	X  Expr
}

// BinaryExpr is a binary operator, including the comma operator, `&&`,
// `||` and `^^`.
type BinaryExpr struct {
	Span
	Op Token
	X  Expr
	Y  Expr
}

// AssignExpr is `x = y` or a compound assignment (`+=` ...): Op is ASSIGN
// or the compound token.
type AssignExpr struct {
	Span
	Op Token
	X  Expr
	Y  Expr
}

// CondExpr is `c ? x : y`.
type CondExpr struct {
	Span
	Cond Expr
	X    Expr
	Y    Expr
}

// CastExpr is `(type) x`.
type CastExpr struct {
	Span
	Type *TypeName
	X    Expr
}

// SizeofExpr is `sizeof(type)` or `sizeof expr`: exactly one of Type and X
// is set.
type SizeofExpr struct {
	Span
	Type *TypeName
	X    Expr
}

// StringofExpr is `stringof(x)` or `stringof x`.
type StringofExpr struct {
	Span
	X Expr
}

// OffsetofExpr is `offsetof(type, member)`; Member may be a dotted path.
type OffsetofExpr struct {
	Span
	Type   *TypeName
	Member []*Ident
}

// XlateExpr is `xlate<type>(x)`.
type XlateExpr struct {
	Span
	Type *TypeName
	X    Expr
}

// CallExpr is `fn(args)`: a subroutine or action call. Fun is an *Ident in
// valid programs; the parser keeps whatever was written.
type CallExpr struct {
	Span
	Fun  Expr
	Args []Expr
}

// IndexExpr is `x[i]` or `x[i, j, ...]` (an associative array reference
// or, for a C array or pointer, a single index).
type IndexExpr struct {
	Span
	X     Expr
	Index []Expr
}

// MemberExpr is `x.name` or `x->name`.
type MemberExpr struct {
	Span
	X     Expr
	Arrow bool
	Name  *Ident
}

// ParenExpr is `(x)`; kept so that diagnostics and the printer can see
// parentheses.
type ParenExpr struct {
	Span
	X Expr
}

// Unparen returns e without the parentheses around it.
func Unparen(e Expr) Expr {
	for {
		p, ok := e.(*ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// BadExpr stands for an expression that failed to parse.
type BadExpr struct {
	Span
}

func (*Ident) exprNode()        {}
func (*IntLit) exprNode()       {}
func (*FloatLit) exprNode()     {}
func (*StringLit) exprNode()    {}
func (*ScopedVar) exprNode()    {}
func (*MacroVar) exprNode()     {}
func (*AggExpr) exprNode()      {}
func (*UnaryExpr) exprNode()    {}
func (*PostfixExpr) exprNode()  {}
func (*BinaryExpr) exprNode()   {}
func (*AssignExpr) exprNode()   {}
func (*CondExpr) exprNode()     {}
func (*CastExpr) exprNode()     {}
func (*SizeofExpr) exprNode()   {}
func (*StringofExpr) exprNode() {}
func (*OffsetofExpr) exprNode() {}
func (*XlateExpr) exprNode()    {}
func (*CallExpr) exprNode()     {}
func (*IndexExpr) exprNode()    {}
func (*MemberExpr) exprNode()   {}
func (*ParenExpr) exprNode()    {}
func (*BadExpr) exprNode()      {}

// String returns the scope's keyword: "self", "this" or "flow".
func (s VarScope) String() string {
	switch s {
	case ScopeSelf:
		return "self"
	case ScopeThis:
		return "this"
	case ScopeFlow:
		return "flow"
	}
	return "?"
}
