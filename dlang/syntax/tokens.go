package syntax

// Token is a lexical token kind.
type Token int

// Tokens. The operator tokens double as operator codes in the AST.
const (
	ILLEGAL Token = iota
	EOF

	// Literals and names.
	IDENT    // foo, vmlinux`foo (scoped identifiers are one token)
	INT      // 42, 0x2a, 052, 42ul, 'c'
	FLOAT    // 1.5
	STRING   // "abc"
	MACRO    // $1, $target
	QMACRO   // $$1
	AGG      // @, @name
	PDESC    // a probe description in probe-description mode
	TNAME    // an identifier known to be a type name (typedef, D builtin)
	PRAGMA   // a #pragma line (the text after #pragma)
	LINEMARK // a cpp line marker (# 12 "file")

	// Operators.
	ADD    // +
	SUB    // -
	MUL    // *
	QUO    // /
	REM    // %
	AND    // &
	OR     // |
	XOR    // ^
	SHL    // <<
	SHR    // >>
	LAND   // &&
	LOR    // ||
	LXOR   // ^^
	NOT    // !
	BNEG   // ~
	INC    // ++
	DEC    // --
	EQL    // ==
	NEQ    // !=
	LSS    // <
	GTR    // >
	LEQ    // <=
	GEQ    // >=
	ASSIGN // =
	ADDASS // +=
	SUBASS // -=
	MULASS // *=
	QUOASS // /=
	REMASS // %=
	ANDASS // &=
	ORASS  // |=
	XORASS // ^=
	SHLASS // <<=
	SHRASS // >>=
	QUEST  // ?
	COLON  // :
	DOT    // .
	ARROW  // ->
	COMMA  // ,
	SEMI   // ;
	LPAREN // (
	RPAREN // )
	LBRACK // [
	RBRACK // ]
	LBRACE // {
	RBRACE // }
	ELLIPSIS
	// Unary forms of ADD/SUB/MUL/AND used as operator codes in UnaryExpr:
	// the parser stores ADD, SUB, MUL (dereference) and AND (address-of).

	// Keywords.
	keywordBeg
	AUTO
	BREAK
	CASE
	CHAR
	CONST
	CONTINUE
	COUNTER
	DEFAULT
	DO
	DOUBLE
	ELSE
	ENUM
	EXTERN
	FLOAT_KW
	FOR
	GOTO
	IF
	IMPORT
	INLINE
	INT_KW
	LONG
	OFFSETOF
	PROBE
	PROVIDER
	REGISTER
	RESTRICT
	RETURN
	SELF
	SHORT
	SIGNED
	SIZEOF
	STATIC
	STRING_KW
	STRINGOF
	STRUCT
	SWITCH
	THIS
	TRANSLATOR
	TYPEDEF
	UNION
	UNSIGNED
	USERLAND
	VOID
	VOLATILE
	WHILE
	XLATE
	keywordEnd
)
