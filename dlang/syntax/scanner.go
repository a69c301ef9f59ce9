package syntax

import (
	"bytes"
	"fmt"
	"strings"
)

// scanMode is the scanner's start condition, after dt_lex.l's.
type scanMode int

const (
	// outerMode is dt_lex.l's S2: the program's outer level, where words
	// are probe descriptions unless they are declaration keywords or type
	// names. The scanner leaves it by itself after a keyword or type name;
	// the parser returns to it after each top-level item.
	outerMode scanMode = iota
	// exprMode is S0: clauses, predicates, declarations and definitions.
	exprMode
	// memberMode is SIDENT: the name after "." or "->", where keywords
	// are plain identifiers. It lasts one token.
	memberMode
)

// token is one scanned token with what the parser needs to know of it.
type token struct {
	tok Token
	pos Pos    // first byte
	end Pos    // just after the last byte
	lit string // source text

	// For identifiers: the first byte after the token that is not blank
	// ([\f\n\r\t\v ]) and the byte after that (0 at end of input), which
	// dtrace's lexer peeks at to tell variables from type names.
	next0, next1 byte
	// tail is the text from the token's start to the end of its line
	// (not copied). dtrace quotes it instead of the token in "syntax
	// error near" when its lexer's lookahead clobbered the token text.
	tail []byte
	// epred marks a "/" that closes a predicate: the next non-blank byte
	// is ";", "{", "/" or the end of input.
	epred bool
	// member marks an identifier scanned in memberMode.
	member bool
	// near, if set, replaces lit in "syntax error near" messages.
	near string
	// lineAfter is set for "/" in expression mode: dtrace's lexer
	// consumed the blanks after it, newlines included, so an error at
	// this token is reported on the line of the next non-blank byte, at
	// offset lineOff.
	lineAfter bool
	lineOff   int

	val      uint64 // INT
	suffix   string // INT, lower-cased
	isChar   bool   // INT written as a character constant
	overflow bool   // INT
	str      string // STRING value; MACRO and QMACRO name
}

// nearText is what dtrace quotes in "syntax error near ...".
func (t *token) nearText(clobbered bool) string {
	if t.tok == EOF {
		return ""
	}
	if clobbered {
		return string(t.tail)
	}
	if t.near != "" {
		return t.near
	}
	return t.lit
}

// errorHandler receives a scanner error. off is the byte offset whose
// line dtrace reports. The parser's handler does not return.
type errorHandler func(off int, tag, msg string)

// scanner turns D source into tokens. It never panics by itself; errors
// go to errh.
type scanner struct {
	file *File
	src  []byte
	off  int // next byte to read
	mode scanMode
	errh errorHandler

	// pspec: descriptions are never type names (DTRACE_C_PSPEC).
	pspec bool
	// isType reports whether a name is a type name, for descriptions
	// like "int*x" at the outer level.
	isType func(string) bool
	// macroDefined reports whether $N (N >= 0) names an argument; nil
	// accepts them all.
	macroDefined func(n int) bool

	parens, brackets, braces int

	// nulAtEOF is set when dtrace's lexer would have pushed a NUL byte
	// back at the end of input: the next scan past the last blank fails
	// with "syntax error near end-of-input".
	nulAtEOF bool

	// directives are the control lines seen so far, in order.
	directives []*PragmaDecl
	// lineFrom and lineTo cache lineEnd's last answer.
	lineFrom, lineTo int
	// checkDirective, if set, validates a control line when it is
	// scanned, as dtrace acts on pragmas at once.
	checkDirective func(*PragmaDecl) (tag, msg string)
}

func (s *scanner) init(file *File, src []byte, errh errorHandler) {
	s.file = file
	s.src = src
	s.errh = errh
	for i, c := range src {
		if c == '\n' {
			file.AddLine(i + 1)
		}
	}
}

func (s *scanner) errorf(off int, tag, format string, args ...any) {
	s.errh(off, tag, fmt.Sprintf(format, args...))
}

// peekc returns the byte at off, or 0 past the end.
func (s *scanner) peekc(off int) byte {
	if off < len(s.src) {
		return s.src[off]
	}
	return 0
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isHex(c byte) bool    { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func isAlnum(c byte) bool  { return isLetter(c) || isDigit(c) }
func isBlank(c byte) bool  { return c == ' ' || c == '\t' || c == '\f' || c == '\v' }
func isSpace(c byte) bool  { return isBlank(c) || c == '\n' || c == '\r' }

// isPspecStart and isPspecChar follow RGX_PSPEC.
func isPspecStart(c byte) bool {
	return isLetter(c) || strings.IndexByte("-$:.?*\\[]!", c) >= 0
}
func isPspecChar(c byte) bool { return isPspecStart(c) || isDigit(c) || c == '`' }

// atLineStart reports whether off begins a line.
func (s *scanner) atLineStart(off int) bool { return off == 0 || s.src[off-1] == '\n' }

// lineEnd returns the offset of the newline ending the line holding off.
// It remembers the last answer: most calls ask about the same line.
func (s *scanner) lineEnd(off int) int {
	if off >= s.lineFrom && off <= s.lineTo && s.lineTo > 0 {
		return s.lineTo
	}
	end := len(s.src)
	if i := bytes.IndexByte(s.src[off:], '\n'); i >= 0 {
		end = off + i
	}
	s.lineFrom, s.lineTo = off, end
	return end
}

// next scans the next token in the current mode.
func (s *scanner) next() token {
	for {
		// Control lines and #! lines start at the beginning of a line,
		// possibly after blanks (RGX_CTL, RGX_INTERP).
		if s.mode != memberMode && s.off < len(s.src) && s.atLineStart(s.off) {
			i := s.off
			for i < len(s.src) && isBlank(s.src[i]) {
				i++
			}
			if s.peekc(i) == '#' {
				if s.peekc(i+1) == '!' {
					s.off = s.lineEnd(i)
				} else {
					s.off = i + 1
					s.controlLine()
				}
				continue
			}
		}
		if s.off >= len(s.src) {
			break
		}
		c := s.src[s.off]
		if isSpace(c) {
			s.off++
			continue
		}
		if c == '\\' && s.peekc(s.off+1) == '\n' && s.mode == exprMode {
			s.off += 2
			continue
		}
		if c == '/' && s.peekc(s.off+1) == '*' {
			s.comment()
			continue
		}
		break
	}
	if s.off >= len(s.src) {
		if s.nulAtEOF {
			s.errorf(len(s.src), "D_SYNTAX", "syntax error near end-of-input")
		}
		return token{tok: EOF, pos: s.file.Pos(len(s.src)), end: s.file.Pos(len(s.src))}
	}
	switch s.mode {
	case outerMode:
		return s.scanOuter()
	case memberMode:
		s.mode = exprMode
		c := s.src[s.off]
		if isLetter(c) || c == '`' || isDigit(c) && s.identEnd(s.off) > 0 {
			end := s.identEnd(s.off)
			t := s.make(IDENT, s.off, end)
			t.member = true
			s.off = end
			return t
		}
	}
	return s.scanExpr()
}

// make returns a token of kind tok spanning src[start:end].
func (s *scanner) make(tok Token, start, end int) token {
	return token{
		tok: tok,
		pos: s.file.Pos(start),
		end: s.file.Pos(end),
		lit: string(s.src[start:end]),
	}
}

// tailFrom returns the text from start to the end of its line.
func (s *scanner) tailFrom(start int) []byte {
	return s.src[start:s.lineEnd(start):s.lineEnd(start)]
}

// comment skips a /* */ comment (dt_lex.l's S1).
func (s *scanner) comment() {
	i := s.off + 2
	for {
		if i >= len(s.src) {
			s.errorf(len(s.src), "D_SYNTAX", "end-of-file encountered before matching */")
			s.off = len(s.src)
			return
		}
		if s.src[i] == '/' && s.peekc(i+1) == '*' {
			s.errorf(i, "D_SYNTAX", "/* encountered inside a comment")
		}
		if s.src[i] == '*' && s.peekc(i+1) == '/' {
			s.off = i + 2
			return
		}
		i++
	}
}

// identEnd returns the end of the identifier (RGX_IDENT) starting at
// off, or 0 if none starts there.
func (s *scanner) identEnd(off int) int {
	c := s.peekc(off)
	switch {
	case isLetter(c) || c == '`':
		i := off + 1
		for i < len(s.src) && (isAlnum(s.src[i]) || s.src[i] == '`') {
			i++
		}
		return i
	case isDigit(c):
		// [0-9][0-9a-zA-Z_]*`[0-9a-zA-Z_`]*: a module name that starts
		// with a digit.
		i := off + 1
		for i < len(s.src) && isAlnum(s.src[i]) {
			i++
		}
		if s.peekc(i) != '`' {
			return 0
		}
		for i < len(s.src) && (isAlnum(s.src[i]) || s.src[i] == '`') {
			i++
		}
		return i
	}
	return 0
}

// outerKeywords are the keywords dt_lex.l knows in S2; each one switches
// to expression mode.
var outerKeywords = someKeywords("auto char const counter double enum extern float import inline int long " +
	"provider register restrict self short signed static string struct this translator typedef union " +
	"unsigned void volatile")

// typeKeywords are the keywords that name types; "int*x" at the outer
// level starts a declaration with one of them.
var typeKeywords = someKeywords("char double float int long short signed unsigned void string")

// someKeywords returns the entries of keywords for the names in list,
// separated by spaces.
func someKeywords(list string) map[string]Token {
	m := map[string]Token{}
	for _, name := range strings.Fields(list) {
		m[name] = keywords[name]
	}
	return m
}

// keywords are the keywords of expression mode.
var keywords = map[string]Token{
	"auto": AUTO, "break": BREAK, "case": CASE, "char": CHAR,
	"const": CONST, "continue": CONTINUE, "counter": COUNTER,
	"default": DEFAULT, "do": DO, "double": DOUBLE, "else": ELSE,
	"enum": ENUM, "extern": EXTERN, "float": FLOAT_KW, "for": FOR,
	"goto": GOTO, "if": IF, "import": IMPORT, "inline": INLINE,
	"int": INT_KW, "long": LONG, "offsetof": OFFSETOF, "probe": PROBE,
	"provider": PROVIDER, "register": REGISTER, "restrict": RESTRICT,
	"return": RETURN, "self": SELF, "short": SHORT, "signed": SIGNED,
	"sizeof": SIZEOF, "static": STATIC, "string": STRING_KW,
	"stringof": STRINGOF, "struct": STRUCT, "switch": SWITCH,
	"this": THIS, "translator": TRANSLATOR, "typedef": TYPEDEF,
	"union": UNION, "unsigned": UNSIGNED, "void": VOID,
	"volatile": VOLATILE, "while": WHILE, "xlate": XLATE,
	"userland": USERLAND,
}

// scanOuter scans one token in outerMode (S2).
func (s *scanner) scanOuter() token {
	start := s.off
	c := s.src[start]
	switch {
	case isDigit(c):
		return s.scanNumber(false)
	case c == '{':
		s.braces++
		s.off++
		return s.make(LBRACE, start, s.off)
	case c == '/':
		s.off++
		return s.make(QUO, start, s.off)
	case c == ',':
		s.off++
		return s.make(COMMA, start, s.off)
	case !isPspecStart(c):
		s.badChar(start)
	}
	end := start + 1
	for end < len(s.src) && isPspecChar(s.src[end]) {
		end++
	}
	text := string(s.src[start:end])
	if kw, ok := outerKeywords[text]; ok {
		s.off = end
		s.mode = exprMode
		return s.make(kw, start, end)
	}
	// A word that could be a type name begins a declaration: "int*x"
	// is a declaration when int is a type, a description otherwise.
	if !s.pspec && !strings.ContainsAny(text, ":-.?!`") &&
		text != "BEGIN" && text != "END" && text != "ERROR" && s.isType != nil {
		name := text
		if i := strings.IndexByte(text, '*'); i > 0 {
			name = text[:i]
		}
		if kw, ok := typeKeywords[name]; ok {
			s.off = start + len(name)
			s.mode = exprMode
			return s.make(kw, start, s.off)
		}
		if s.isType(name) {
			s.off = start + len(name)
			s.mode = exprMode
			return s.make(TNAME, start, s.off)
		}
	}
	s.off = end
	return s.make(PDESC, start, end)
}

// badChar reports a byte that starts no token.
func (s *scanner) badChar(off int) {
	if s.src[off] == 0 {
		s.errorf(off, "D_SYNTAX", "syntax error near end-of-input")
	}
	s.errorf(off, "D_SYNTAX", "syntax error near \"%s\"", string(s.src[off:off+1]))
}

// ops maps operator spellings to tokens; scanOp tries the longest first.
var ops = map[string]Token{
	"+": ADD, "-": SUB, "*": MUL, "/": QUO, "%": REM, "&": AND, "|": OR,
	"^": XOR, "<<": SHL, ">>": SHR, "&&": LAND, "||": LOR, "^^": LXOR,
	"!": NOT, "~": BNEG, "++": INC, "--": DEC, "==": EQL, "!=": NEQ,
	"<": LSS, ">": GTR, "<=": LEQ, ">=": GEQ, "=": ASSIGN, "+=": ADDASS,
	"-=": SUBASS, "*=": MULASS, "/=": QUOASS, "%=": REMASS, "&=": ANDASS,
	"|=": ORASS, "^=": XORASS, "<<=": SHLASS, ">>=": SHRASS, "?": QUEST,
	":": COLON, ".": DOT, "->": ARROW, ",": COMMA, ";": SEMI, "(": LPAREN,
	")": RPAREN, "[": LBRACK, "]": RBRACK, "{": LBRACE, "}": RBRACE,
	"...": ELLIPSIS,
}

// scanExpr scans one token in exprMode (S0).
func (s *scanner) scanExpr() token {
	start := s.off
	c := s.src[start]
	switch {
	case c == '$':
		return s.scanMacro()
	case c == '@':
		end := start + 1
		if isLetter(s.peekc(end)) {
			for end < len(s.src) && isAlnum(s.src[end]) {
				end++
			}
		}
		t := s.make(AGG, start, end)
		t.str = t.lit[1:]
		s.off = end
		return t
	case c == '"':
		return s.scanString()
	case c == '\'':
		return s.scanChar()
	case isDigit(c):
		if end := s.identEnd(start); end > 0 {
			return s.scanIdent(start, end)
		}
		return s.scanNumber(true)
	case c == '.' && isDigit(s.peekc(start+1)):
		return s.scanNumber(true)
	case isLetter(c) || c == '`':
		return s.scanIdent(start, s.identEnd(start))
	}
	for n := 3; n > 0; n-- {
		if start+n > len(s.src) {
			continue
		}
		tok, ok := ops[string(s.src[start:start+n])]
		if !ok {
			continue
		}
		s.off = start + n
		t := s.make(tok, start, s.off)
		switch tok {
		case QUO:
			s.predicateEnd(&t)
		case LPAREN:
			s.parens++
		case RPAREN:
			if s.parens--; s.parens < 0 {
				s.errorf(start, "D_SYNTAX", "extra ) in input stream")
			}
		case LBRACK:
			s.brackets++
		case RBRACK:
			if s.brackets--; s.brackets < 0 {
				s.errorf(start, "D_SYNTAX", "extra ] in input stream")
			}
		case LBRACE:
			s.braces++
		case RBRACE:
			if s.braces--; s.braces < 0 {
				s.errorf(start, "D_SYNTAX", "extra } in input stream")
			}
		case DOT, ARROW:
			s.mode = memberMode
		}
		return t
	}
	s.badChar(start)
	panic("unreachable")
}

// predicateEnd decides whether the "/" just scanned closes a predicate:
// dtrace looks at the next non-blank byte. When it does, unbalanced
// parentheses or brackets are an error here.
func (s *scanner) predicateEnd(t *token) {
	i := s.off
	for i < len(s.src) && isSpace(s.src[i]) {
		i++
	}
	c := s.peekc(i)
	t.lineAfter, t.lineOff = true, i
	if c == 0 || c == ';' || c == '{' || c == '/' {
		if s.parens != 0 {
			s.errorf(i, "D_SYNTAX", "closing ) expected in predicate before /")
		}
		if s.brackets != 0 {
			s.errorf(i, "D_SYNTAX", "closing ] expected in predicate before /")
		}
		t.epred = true
	}
	if i == s.off {
		// The lookahead left the following text attached to yytext.
		t.lit = string(s.tailFrom(s.off - 1))
	}
}

// scanIdent returns an identifier or keyword spanning src[start:end], with
// the lookahead bytes the parser's type-name heuristic needs.
func (s *scanner) scanIdent(start, end int) token {
	s.off = end
	if kw, ok := keywords[string(s.src[start:end])]; ok {
		return s.make(kw, start, end)
	}
	t := s.make(IDENT, start, end)
	t.tail = s.tailFrom(start)
	i := end
	for i < len(s.src) && isSpace(s.src[i]) {
		i++
	}
	t.next0 = s.peekc(i)
	if t.next0 != 0 {
		t.next1 = s.peekc(i + 1)
	}
	return t
}

// scanMacro scans $N, $$N, $name and $$name.
func (s *scanner) scanMacro() token {
	start := s.off
	i := start + 1
	tok := MACRO
	if s.peekc(i) == '$' {
		i++
		tok = QMACRO
	}
	var end int
	if isDigit(s.peekc(i)) {
		end = i
		for end < len(s.src) && isDigit(s.src[end]) {
			end++
		}
		// $N is longer than $N`ident only when no backquote follows.
		if e := s.identEnd(i); e > end {
			end = e
		} else {
			n := 0
			for _, d := range s.src[i:end] {
				if n = n*10 + int(d-'0'); n > 1<<30 {
					break
				}
			}
			if s.macroDefined != nil && !s.macroDefined(n) {
				s.errorf(end, "D_MACRO_UNDEF", "macro argument %s is not defined",
					string(s.src[start:end]))
			}
		}
	} else if end = s.identEnd(i); end == 0 {
		s.badChar(start)
	} else if !isMacroVar(string(s.src[i:end])) {
		s.errorf(end, "D_MACRO_UNDEF", "macro variable %s is not defined",
			string(s.src[start:end]))
	}
	s.off = end
	t := s.make(tok, start, end)
	t.str = string(s.src[i:end])
	return t
}

// intMatch matches RGX_INT at start: it returns the end of the digits,
// the end of the match with its suffix, and whether it is hexadecimal.
func (s *scanner) intMatch(start int) (digitsEnd, end int, hex bool) {
	end = start
	if s.src[start] == '0' && (s.peekc(start+1) == 'x' || s.peekc(start+1) == 'X') && isHex(s.peekc(start+2)) {
		hex = true
		end = start + 2
		for end < len(s.src) && isHex(s.src[end]) {
			end++
		}
	} else {
		for end < len(s.src) && isDigit(s.src[end]) {
			end++
		}
	}
	digitsEnd = end
	if c := s.peekc(end); c == 'u' || c == 'U' {
		end++
	}
	for k := 0; k < 2; k++ {
		if c := s.peekc(end); c == 'l' || c == 'L' {
			end++
		}
	}
	return digitsEnd, end, hex
}

// scanNumber scans an integer (RGX_INT) or, if fp is set, rejects a
// floating-point constant (RGX_FP) when that match is longer; only
// expression mode knows floating-point constants.
func (s *scanner) scanNumber(fp bool) token {
	start := s.off
	digitsEnd, intEnd, hex := s.intMatch(start)
	// RGX_FP
	fpEnd := start
	for fpEnd < len(s.src) && isDigit(s.src[fpEnd]) {
		fpEnd++
	}
	if fpEnd > start {
		if s.peekc(fpEnd) == '.' {
			fpEnd++
		}
		for fpEnd < len(s.src) && isDigit(s.src[fpEnd]) {
			fpEnd++
		}
	} else if s.peekc(fpEnd) == '.' && isDigit(s.peekc(fpEnd+1)) {
		fpEnd++
		for fpEnd < len(s.src) && isDigit(s.src[fpEnd]) {
			fpEnd++
		}
	}
	if fpEnd > start {
		if c := s.peekc(fpEnd); c == 'e' || c == 'E' {
			j := fpEnd + 1
			if c := s.peekc(j); c == '+' || c == '-' {
				j++
			}
			if isDigit(s.peekc(j)) {
				for j < len(s.src) && isDigit(s.src[j]) {
					j++
				}
				fpEnd = j
			}
		}
		if c := s.peekc(fpEnd); c == 'f' || c == 'F' || c == 'l' || c == 'L' {
			fpEnd++
		}
	}
	if fp && fpEnd > intEnd {
		s.off = fpEnd
		s.errorf(fpEnd, "D_SYNTAX", "floating-point constants are not permitted")
	}
	s.off = intEnd
	t := s.make(INT, start, intEnd)
	// strtoull(text, &p, 0): the base comes from the prefix and the
	// conversion stops at the first byte that is not a digit of it.
	base := uint64(10)
	i := start
	switch {
	case hex:
		base = 16
		i += 2
	case s.src[start] == '0':
		base = 8
	}
	var v uint64
	for ; i < digitsEnd; i++ {
		c := s.src[i]
		var d uint64
		switch {
		case isDigit(c):
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		default:
			d = uint64(c-'A') + 10
		}
		if d >= base {
			break
		}
		if v > (^uint64(0)-d)/base {
			t.overflow = true
		}
		v = v*base + d
	}
	t.val = v
	if t.overflow {
		s.errorf(intEnd, "D_INT_OFLOW", "constant %s results in integer overflow", t.lit)
	}
	if i < digitsEnd {
		s.errorf(intEnd, "D_INT_DIGIT", "constant %s contains invalid digit %c", t.lit, s.src[i])
	}
	t.suffix = strings.ToLower(string(s.src[digitsEnd:intEnd]))
	return t
}

// quotedEnd finds the end of a quoted literal starting at start with
// quote q, after RGX_STR/RGX_CHR. It returns the offset of the closing
// quote, or of the newline that ends the line first, or -1 when neither
// is there (an unterminated literal at end of input, or a backslash
// before a newline).
func (s *scanner) quotedEnd(start int, q byte) (end int, newline bool) {
	i := start + 1
	for i < len(s.src) {
		switch c := s.src[i]; c {
		case q:
			return i, false
		case '\n':
			return i, true
		case '\\':
			if n := s.peekc(i + 1); n == '\n' || n == 0 {
				return -1, false
			}
			i += 2
		default:
			i++
		}
	}
	return -1, false
}

// scanQuoted scans a literal between quotes from s.off and moves past it;
// a newline within it is the error tag nlTag, saying nlMsg. It returns the
// offsets of the opening and closing quotes.
func (s *scanner) scanQuoted(quote byte, nlTag, nlMsg string) (start, end int) {
	start = s.off
	end, nl := s.quotedEnd(start, quote)
	switch {
	case end < 0:
		s.badChar(start)
	case nl:
		s.errorf(end+1, nlTag, "%s", nlMsg)
	}
	s.off = end + 1
	return start, end
}

// scanString scans a string literal.
func (s *scanner) scanString() token {
	start, end := s.scanQuoted('"', "D_STR_NL", "newline encountered in string literal")
	t := s.make(STRING, start, s.off)
	t.str = unescape(s.src[start+1 : end])
	return t
}

// scanChar scans a character constant; its value is the bytes of the
// constant, the first one most significant.
func (s *scanner) scanChar() token {
	start, end := s.scanQuoted('\'', "D_CHR_NL", "newline encountered in character constant")
	if end == start+1 {
		s.errorf(s.off, "D_CHR_NULL", "empty character constant")
	}
	b := unescape(s.src[start+1 : end])
	if len(b) > 8 {
		s.errorf(s.off, "D_CHR_OFLOW", "character constant is too long")
	}
	t := s.make(INT, start, s.off)
	// dtrace's lexer overwrites the closing quote and unescapes the text
	// in place, so its errors quote the quote and the bytes.
	t.near = "'" + b
	if i := strings.IndexByte(t.near, '\n'); i >= 0 {
		t.near = t.near[:i]
	}
	for i := 0; i < len(b); i++ {
		t.val = t.val<<8 | uint64(b[i])
	}
	t.isChar = true
	return t
}

// simpleEscapes are the escapes of one character after the backslash,
// by that character.
var simpleEscapes = [256]byte{'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v', '"': '"', '\\': '\\'}

// unescape converts C escape sequences as dtrace's stresc2chr does. An
// unknown escape keeps its backslash (\' and \? too, unlike C).
func unescape(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			out = append(out, c)
			continue
		}
		i++
		switch c = b[i]; {
		case c >= '0' && c <= '7':
			v := c - '0'
			for k := 0; k < 2 && i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '7'; k++ {
				i++
				v = v*8 + b[i] - '0'
			}
			out = append(out, v)
		case c == 'x':
			var v byte
			for i+1 < len(b) && isHex(b[i+1]) {
				i++
				d := b[i]
				switch {
				case isDigit(d):
					d -= '0'
				case d >= 'a':
					d = d - 'a' + 10
				default:
					d = d - 'A' + 10
				}
				v = v*16 + d
			}
			out = append(out, v)
		case simpleEscapes[c] != 0:
			out = append(out, simpleEscapes[c])
		default:
			out = append(out, '\\', c)
		}
	}
	return string(out)
}

// macroVars are the macro variables dtrace defines ($pid, $target, ...).
var macroVars = map[string]bool{
	"egid": true, "euid": true, "gid": true, "pid": true, "pgid": true,
	"ppid": true, "sid": true, "target": true, "uid": true,
}

func isMacroVar(name string) bool { return macroVars[name] }

// controlLine scans a control line after its "#" (dt_lex.l's S3) and
// acts on it as dt_pragma does: line markers renumber the lines that
// follow; #pragma, #error and #ident lines become PragmaDecls.
func (s *scanner) controlLine() {
	hash := s.off - 1
	type word struct {
		text  string
		isInt bool
		isStr bool
		val   uint64
		str   string
	}
	var words []word
	for {
		if s.off >= len(s.src) {
			s.errorf(len(s.src), "D_SYNTAX", "end-of-file encountered before end of control line")
		}
		c := s.src[s.off]
		if c == '\n' {
			s.off++
			break
		}
		if isBlank(c) {
			s.off++
			continue
		}
		start := s.off
		if c == '"' {
			end, nl := s.quotedEnd(start, '"')
			switch {
			case end < 0:
				s.badChar(start)
			case nl:
				s.errorf(end+1, "D_STR_NL", "newline encountered in string literal")
			}
			s.off = end + 1
			words = append(words, word{text: string(s.src[start:s.off]), isStr: true,
				str: unescape(s.src[start+1 : end])})
			continue
		}
		end := start
		for end < len(s.src) && !isBlank(s.src[end]) && s.src[end] != '\n' && s.src[end] != '"' {
			end++
		}
		if _, e, _ := s.intMatch(start); isDigit(c) && e == end {
			// The word is an integer (RGX_INT wins a tie with words).
			t := s.scanNumber(false)
			words = append(words, word{text: t.lit, isInt: true, val: t.val})
			continue
		}
		s.off = end
		words = append(words, word{text: string(s.src[start:end])})
	}
	lineOff := s.off // the offset of the line after the control line
	if len(words) == 0 {
		return // the null directive
	}
	malformed := func(name string) {
		s.errorf(lineOff-1, "D_PRAGMA_MALFORM", "malformed #%s <line> [ [\"file\"] state ]", name)
	}
	setLine := func(name string, args []word, delta int) {
		if len(args) == 0 || !args[0].isInt || len(args) > 1 && !args[1].isStr {
			malformed(name)
		}
		for _, a := range args[min(2, len(args)):] {
			if !a.isInt {
				malformed(name)
			}
		}
		file := ""
		if len(args) > 1 {
			file = args[1].str
			if file == "/dev/stdin" {
				file = s.file.Name()
			}
		}
		s.file.AddLineInfo(lineOff, file, int(int32(args[0].val))+delta) // a C int, as in dtrace
	}
	if words[0].isInt {
		setLine("line", words, 0)
		return
	}
	const (
		kindDir = iota // #directive
		kindSub        // #pragma directive
		kindDCP        // #pragma D directive
	)
	kind := kindDir
	for i, w := range words {
		if w.isInt || w.isStr {
			s.errorf(lineOff-1, "D_PRAGCTL_INVAL", "invalid control directive")
		}
		if kind == kindDir && w.text == "pragma" {
			kind = kindSub
			continue
		}
		if kind == kindSub && w.text == "D" {
			kind = kindDCP
			continue
		}
		dkind, known := pragmaKinds[w.text]
		if known && dkind <= kind {
			if w.text == "line" {
				setLine("line", words[i+1:], 1)
				return
			}
			d := &PragmaDecl{
				Span:      Span{s.file.Pos(hash), s.file.Pos(max(hash, lineOff-1))},
				Directive: "pragma",
			}
			if kind == kindDir {
				d.Directive = w.text
			}
			for _, w := range words[1:] {
				d.Words = append(d.Words, w.text)
			}
			if kind == kindDir {
				d.Words = d.Words[i:]
			}
			if kind == kindDCP && w.text == "option" && len(d.Words) == 3 && d.Words[2] == "pspec" {
				// -xpspec takes effect for the rest of the text.
				s.pspec = true
			}
			if s.checkDirective != nil {
				if tag, msg := s.checkDirective(d); tag != "" {
					s.errorf(lineOff-1, tag, "%s", msg)
				}
			}
			s.directives = append(s.directives, d)
			return
		}
		switch kind {
		case kindDir:
			s.errorf(lineOff-1, "D_PRAGCTL_INVAL", "invalid control directive: #%s", w.text)
		case kindDCP:
			s.errorf(lineOff-1, "D_PRAGMA_INVAL", "invalid D pragma: %s", w.text)
		}
		return // an unknown #pragma is ignored
	}
}

// pragmaKinds are dtrace's control directives and where each may appear:
// 0 as #name, 2 only as #pragma D name.
var pragmaKinds = map[string]int{
	"attributes": 2, "binding": 2, "depends_on": 2, "option": 2,
	"error": 0, "ident": 0, "line": 0,
}
