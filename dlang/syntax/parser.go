package syntax

import (
	"fmt"
	"strings"
)

// Mode controls what Parse accepts.
type Mode uint

// Parse modes.
const (
	// BareDescs accepts a clause that is only probe descriptions, with
	// neither predicate nor actions, as dtrace does for text given with
	// -n, -P, -m, -f and -i. In a script file that is an error.
	BareDescs Mode = 1 << iota
	// PSpec makes every word at the outer level a probe description,
	// never a type name (dtrace's -xpspec, and always for -n text).
	PSpec
)

// Config holds the parser's settings beyond the mode.
type Config struct {
	Mode Mode
	// IsTypeName reports whether a name (possibly module`name) is a type
	// name known outside the program, such as a kernel typedef. The
	// parser itself knows D's builtin type names and the typedefs the
	// program declares. nil means none.
	IsTypeName func(name string) bool
	// IsIdent reports whether a name is a global identifier defined
	// outside the program: dtrace's predefined ones (the checker's
	// builtin table, check.IsPredefinedIdent) and the inlines of its D
	// library (curpsinfo, EPERM). It only changes the text syntax errors
	// quote, as in dtrace. nil means none: the parser knows no builtin
	// names of its own.
	IsIdent func(name string) bool
	// MacroArg reports whether the macro argument $n is defined. When
	// set, a reference to an undefined one is reported as dtrace's lexer
	// does (D_MACRO_UNDEF); nil leaves the check to the checker.
	MacroArg func(n int) bool
	// Directive, if set, is called for each #pragma, #error and #ident
	// line when it is scanned, which is when dtrace acts on them; a
	// non-empty tag stops the parse with that error, reported at the
	// directive's line.
	Directive func(d *PragmaDecl) (tag, msg string)
}

// Parse parses one D program (a -s script) and returns its tree. On a
// syntax error it returns the declarations parsed before it and an
// ErrorList holding the error; like dtrace it stops at the first one.
func Parse(fset *FileSet, filename string, src []byte, mode Mode) (*Program, error) {
	return (&Config{Mode: mode}).Parse(fset, filename, src)
}

// ParseProbeSpec parses text given with -n (and -P, -m, -f, -i after the
// caller has made a description of it): a program whose clauses may be
// bare probe descriptions, like "syscall::read:entry" or
// "BEGIN { trace(1) }".
func ParseProbeSpec(fset *FileSet, filename string, src []byte, mode Mode) (*Program, error) {
	return (&Config{Mode: mode | BareDescs | PSpec}).Parse(fset, filename, src)
}

// Parse parses src as Parse does, with c's settings.
func (c *Config) Parse(fset *FileSet, filename string, src []byte) (prog *Program, err error) {
	p := c.newParser(fset, filename, src)
	prog = &Program{File: p.file, Span: Span{p.file.Pos(0), p.file.Pos(len(src))}}
	defer func() {
		p.flushDirectives(Pos(1 << 62))
		prog.Decls = p.decls
	}()
	defer p.finish(&err) // runs first: recover must be called by the deferred function itself
	p.next()
	for p.tok.tok != EOF {
		p.addDecl(p.parseExternal())
	}
	return prog, nil
}

// ParseType parses a type name given as text, such as a provider's
// argument type "struct task_struct *" or a -xtype option, as dtrace's
// type context (DT_CTX_DTYPE) does: every name is a type name.
func (c *Config) ParseType(fset *FileSet, filename string, src []byte) (*TypeName, error) {
	return parseAll(c, fset, filename, src, true, (*parser).parseTypeName)
}

// ParseExpr parses a D expression given as text (dtrace's expression
// context, DT_CTX_DEXPR).
func (c *Config) ParseExpr(fset *FileSet, filename string, src []byte) (Expr, error) {
	return parseAll(c, fset, filename, src, false, (*parser).parseExpr)
}

// parseAll parses all of src with parse in the scanner's expression
// mode, in dtrace's type context if typeContext (every name a type
// name); anything after what parse reads is a syntax error.
func parseAll[T any](c *Config, fset *FileSet, filename string, src []byte, typeContext bool, parse func(*parser) T) (x T, err error) {
	p := c.newParser(fset, filename, src)
	p.typeContext = typeContext
	p.lenientEOF = true
	p.s.mode = exprMode
	defer p.finish(&err)
	p.next()
	x = parse(p)
	if p.tok.tok != EOF {
		p.syntaxError()
	}
	return x, nil
}

// newParser returns a parser of src with c's settings.
func (c *Config) newParser(fset *FileSet, filename string, src []byte) *parser {
	p := &parser{cfg: c}
	p.file = fset.AddFile(filename, len(src))
	p.s.init(p.file, src, p.scanError)
	p.s.pspec = c.Mode&PSpec != 0
	p.s.isType = p.isType
	p.s.macroDefined = c.MacroArg
	p.s.checkDirective = c.Directive
	p.typedefs = map[string]bool{}
	p.idents = map[string]bool{}
	p.tags = map[string]bool{}
	return p
}

// finish ends a parse: it stops the unwinding of an error and sets *err
// to the errors found.
func (p *parser) finish(err *error) {
	if r := recover(); r != nil {
		if _, ok := r.(bailout); !ok {
			// Not ours: a bug, which must crash loudly.
			panic(r)
		}
	}
	if len(p.errors) > 0 {
		p.errors.Sort()
		*err = p.errors
	}
}

// bailout is the panic value that unwinds the parser after an error.
type bailout struct{}

type parser struct {
	cfg    *Config
	file   *File
	s      scanner
	tok    token
	errors ErrorList
	decls  []Decl

	// clobbered says that dtrace would quote the rest of the line rather
	// than the current token in a syntax error.
	clobbered bool

	typedefs map[string]bool // typedef names declared so far
	// idents are names known not to be types: declared variables,
	// inlines and enumerators, and names dtrace's lexer guessed to be
	// variables (its pcb_idents).
	idents map[string]bool

	tags map[string]bool // struct, union and enum tags defined so far

	souType     bool // after struct, union or enum: the next name is a tag
	declHasType bool // a named type specifier was seen in this declaration
	inTypedef   bool // parsing a typedef declaration
	xlatorInput bool // between < and > of a translator's input
	typeContext bool // parsing a type name given as text: names are types
	// lenientEOF turns off dtrace's error for a name it peeked past at
	// the end of input; ParseExpr and ParseType text often ends so.
	lenientEOF bool

	depth int // recursion depth, see nest
}

// scanError is the scanner's error handler.
func (p *parser) scanError(off int, tag, msg string) {
	p.errorAt(off, tag, msg)
}

// errorAt records an error reported at the line of offset off and stops.
func (p *parser) errorAt(off int, tag, msg string) {
	pos := p.file.Position(p.file.Pos(off))
	p.errors = append(p.errors, &Error{Pos: pos, Msg: msg, Tag: tag})
	panic(bailout{})
}

func (p *parser) offset(pos Pos) int { return p.file.Offset(pos) }

// syntaxError reports the current token as unexpected, quoting it as
// dtrace does.
func (p *parser) syntaxError() {
	if p.tok.tok == EOF {
		p.errorAt(p.offset(p.tok.pos), "D_SYNTAX", "syntax error near end of input")
	}
	off := p.offset(p.tok.pos)
	if p.tok.lineAfter {
		off = p.tok.lineOff
	}
	p.errorAt(off, "D_SYNTAX", fmt.Sprintf("syntax error near \"%s\"", p.tok.nearText(p.clobbered)))
}

// next advances to the next token, classifying identifiers as dtrace's
// lexer does (id_or_type).
func (p *parser) next() {
	p.tok = p.s.next()
	p.clobbered = false
	switch p.tok.tok {
	case STRUCT, UNION, ENUM:
		p.souType = true
	case LPAREN, RPAREN, LSS, GTR, LBRACE:
		p.souType = false
	case IDENT:
		if !p.tok.member {
			p.classify()
		}
	}
}

// classify decides whether the current identifier is a type name.
func (p *parser) classify() {
	t := &p.tok
	name := t.lit
	if p.souType || p.typeContext {
		p.souType = false
		t.tok = TNAME
		return
	}
	if p.idents[name] || p.cfg.IsIdent != nil && p.cfg.IsIdent(name) {
		return
	}
	// dtrace peeks at the next bytes: a name followed by ++, --, [, =,
	// ; or (outside parentheses) , is taken for a variable. The peek
	// clobbers the token text its errors quote.
	p.clobbered = true
	ident := false
	switch t.next0 {
	case '+', '-':
		ident = t.next1 == t.next0
	case '=':
		ident = t.next1 != '='
	case '[', ';':
		ident = true
	case ',':
		ident = p.s.parens == 0
	case '>':
		ident = p.xlatorInput
	case 0:
		p.s.nulAtEOF = !p.lenientEOF
	}
	if ident {
		if !p.inTypedef {
			p.idents[name] = true
		}
		return
	}
	if !p.isType(name) || p.declHasType {
		return
	}
	t.tok = TNAME
}

// isType reports whether name is a type name. The program's own types
// and D's builtin ones can also be named in the D module's scope, as
// D`name.
func (p *parser) isType(name string) bool {
	base := name
	if mod, n := splitScope(name); mod == "D" {
		base = n
	}
	return builtinTypes[base] || p.typedefs[base] ||
		p.cfg.IsTypeName != nil && p.cfg.IsTypeName(name)
}

// want checks that the current token is tok and advances past it.
func (p *parser) want(tok Token) Pos {
	if p.tok.tok != tok {
		p.syntaxError()
	}
	pos := p.tok.pos
	p.next()
	return pos
}

// addDecl appends d after the control lines that precede its end.
func (p *parser) addDecl(d Decl) {
	p.flushDirectives(d.End())
	p.decls = append(p.decls, d)
}

// flushDirectives moves the control lines scanned before end into the
// declaration list.
func (p *parser) flushDirectives(end Pos) {
	i := 0
	for ; i < len(p.s.directives) && p.s.directives[i].Pos() < end; i++ {
		p.decls = append(p.decls, p.s.directives[i])
	}
	p.s.directives = p.s.directives[i:]
}

// maxNesting bounds the parser's recursion, as yacc's stack bounds
// dtrace's (YYMAXDEPTH), so that deeply nested input is an error rather
// than a stack overflow.
const maxNesting = 10000

// nest counts one level of recursion and returns the function that
// uncounts it.
func (p *parser) nest() func() {
	if p.depth++; p.depth > maxNesting {
		p.errorAt(p.offset(p.tok.pos), "D_SYNTAX",
			fmt.Sprintf("memory exhausted near \"%s\"", p.tok.nearText(p.clobbered)))
	}
	return func() { p.depth-- }
}

// ---------------------------------------------------------------------------
// Top level

// parseExternal parses one top-level item. The current token was
// scanned in outer mode.
func (p *parser) parseExternal() Decl {
	switch p.tok.tok {
	case PDESC, INT:
		return p.parseClause()
	case INLINE:
		return p.parseInline()
	case TRANSLATOR:
		return p.parseTranslator()
	case PROVIDER:
		return p.parseProvider()
	}
	if p.isDeclStart() {
		d := p.parseDeclaration()
		return d
	}
	p.syntaxError()
	return nil
}

// isDeclStart reports whether the current token can begin declaration
// specifiers.
func (p *parser) isDeclStart() bool {
	switch p.tok.tok {
	case AUTO, REGISTER, STATIC, EXTERN, TYPEDEF, SELF, THIS:
		return true
	}
	return p.isTypeStart()
}

// isTypeStart reports whether the current token can begin a type name.
func (p *parser) isTypeStart() bool {
	switch p.tok.tok {
	case VOID, CHAR, SHORT, INT_KW, LONG, FLOAT_KW, DOUBLE, SIGNED, UNSIGNED,
		STRING_KW, TNAME, STRUCT, UNION, ENUM, CONST, VOLATILE, RESTRICT:
		return true
	}
	return false
}

// parseClause parses `descs [/pred/] [{ body }]`.
func (p *parser) parseClause() *ProbeClause {
	c := &ProbeClause{Span: Span{From: p.tok.pos}}
	p.commaList(func() bool {
		if p.tok.tok != PDESC && p.tok.tok != INT {
			p.syntaxError()
		}
		c.Descs = append(c.Descs, &ProbeDesc{Span: Span{p.tok.pos, p.tok.end}, Text: p.tok.lit})
		c.To = p.tok.end
		p.next()
		return true
	})
	p.s.mode = exprMode
	switch p.tok.tok {
	case LBRACE:
		c.Body = p.parseClauseBody()
	case QUO:
		p.next()
		c.Pred = p.parseExpr()
		if p.tok.tok != QUO || !p.tok.epred {
			p.syntaxError()
		}
		slash := p.tok
		p.next()
		if p.tok.tok != LBRACE {
			p.errorAt(p.nodeLineOffset(c.Pred, slash.pos), "D_SYNTAX",
				"expected actions { } following probe description and predicate")
		}
		c.Body = p.parseClauseBody()
	default:
		if p.cfg.Mode&BareDescs == 0 {
			p.errorAt(p.offset(c.Descs[0].End())-1, "D_SYNTAX",
				"expected predicate and/or actions following probe description")
		}
		p.s.mode = outerMode
		return c
	}
	c.To = c.Body.To
	return c
}

// nodeLineOffset returns an offset on the line dtrace gives the node of
// expression x, which is where its lexer was when the parser built the
// node: at x's last token for nodes reduced without lookahead, at the
// token after x (follow) for the others.
func (p *parser) nodeLineOffset(x Expr, follow Pos) int {
	switch x := x.(type) {
	case *Ident, *IntLit, *StringLit, *MacroVar, *AggExpr, *ScopedVar,
		*CallExpr, *IndexExpr, *MemberExpr, *PostfixExpr, *OffsetofExpr, *XlateExpr:
		return p.offset(x.End()) - 1
	case *ParenExpr:
		return p.nodeLineOffset(x.X, x.End()-1)
	}
	return p.offset(follow)
}

// parseClauseBody parses a clause's `{ statements }`; the scanner goes
// back to outer mode after it.
func (p *parser) parseClauseBody() *BlockStmt {
	b := &BlockStmt{Span: Span{From: p.tok.pos}}
	p.next()
	b.List = p.parseStmtList()
	if p.tok.tok != RBRACE {
		p.syntaxError()
	}
	b.To = p.tok.end
	p.s.mode = outerMode
	p.next()
	return b
}

// parseStmtList parses statements up to a closing brace (not consumed).
// As in dtrace, statements are separated by semicolons and the last one
// needs none.
func (p *parser) parseStmtList() []Stmt {
	var list []Stmt
	for p.tok.tok != RBRACE {
		switch p.tok.tok {
		case SEMI:
			list = append(list, &EmptyStmt{Span{p.tok.pos, p.tok.end}})
			p.next()
			continue
		case IF:
			list = append(list, p.parseIf())
			continue
		}
		x := p.parseExpr()
		list = append(list, &ExprStmt{Span{x.Pos(), x.End()}, x})
		if p.tok.tok == SEMI {
			p.next()
			continue
		}
		if p.tok.tok != RBRACE {
			p.syntaxError()
		}
	}
	return list
}

// parseIf parses `if (cond) stmt [else stmt]`, where each stmt is a
// block or one statement.
func (p *parser) parseIf() *IfStmt {
	defer p.nest()()
	s := &IfStmt{Span: Span{From: p.tok.pos}}
	p.next()
	p.want(LPAREN)
	s.Cond = p.parseExpr()
	p.want(RPAREN)
	s.Then = p.parseBranch()
	s.To = s.Then.End()
	if p.tok.tok == ELSE {
		p.next()
		s.Else = p.parseBranch()
		s.To = s.Else.End()
	}
	return s
}

// parseBranch parses the body of an if or else.
func (p *parser) parseBranch() Stmt {
	switch p.tok.tok {
	case LBRACE:
		b := &BlockStmt{Span: Span{From: p.tok.pos}}
		p.next()
		b.List = p.parseStmtList()
		b.To = p.tok.end
		p.want(RBRACE)
		return b
	case IF:
		return p.parseIf()
	case SEMI:
		s := &EmptyStmt{Span{p.tok.pos, p.tok.end}}
		p.next()
		return s
	}
	x := p.parseExpr()
	s := &ExprStmt{Span{x.Pos(), x.End()}, x}
	if p.tok.tok == SEMI {
		s.To = p.tok.end
		p.next()
	} else if p.tok.tok != RBRACE {
		p.syntaxError()
	}
	return s
}

// endTopLevel consumes the ';' that ends a top-level item; the scanner
// returns to outer mode for what follows.
func (p *parser) endTopLevel() Pos {
	if p.tok.tok != SEMI {
		p.syntaxError()
	}
	end := p.tok.end
	p.s.mode = outerMode
	p.next()
	return end
}

// parseDeclaration parses a top-level declaration.
func (p *parser) parseDeclaration() *Declaration {
	d := &Declaration{Span: Span{From: p.tok.pos}}
	d.Specs = p.parseDeclSpecs(classD)
	p.inTypedef = d.Specs.Class == Typedef
	if p.tok.tok != SEMI {
		p.commaList(func() bool {
			dcl := p.parseDeclarator(nameRequired)
			d.Decls = append(d.Decls, dcl)
			p.declare(d.Specs, dcl)
			return true
		})
	}
	p.inTypedef = false
	p.declHasType = false
	d.To = p.endTopLevel()
	return d
}

// declare records the name a declarator declares, which changes how
// later identifiers are scanned.
func (p *parser) declare(specs *DeclSpecs, d *Declarator) {
	if d.Name == nil {
		return
	}
	if specs.Class == Typedef {
		p.typedefs[d.Name.Name] = true
		return
	}
	p.idents[d.Name.Name] = true
}

// What storage classes a list of declaration specifiers may hold.
const (
	classNone = iota // type names and struct members
	classC           // parameters: C's storage classes
	classD           // declarations: C's and D's self and this
)

// parseDeclSpecs parses declaration specifiers; classes says which
// storage classes may appear.
func (p *parser) parseDeclSpecs(classes int) *DeclSpecs {
	ds := &DeclSpecs{Span: Span{From: p.tok.pos, To: p.tok.pos}}
	var basic *BasicType
	for {
		t := p.tok
		switch t.tok {
		case AUTO, REGISTER, STATIC, EXTERN, TYPEDEF, SELF, THIS:
			if classes == classNone || classes == classC && (t.tok == SELF || t.tok == THIS) {
				return p.endSpecs(ds)
			}
			if ds.Class != NoClass {
				p.errorAt(p.offset(t.pos), "D_DECL_CLASS", "only one storage class allowed in a declaration")
			}
			ds.Class = map[Token]StorageClass{AUTO: Auto, REGISTER: Register,
				STATIC: Static, EXTERN: Extern, TYPEDEF: Typedef, SELF: Self, THIS: This}[t.tok]
			if t.tok == TYPEDEF {
				p.inTypedef = true
			}
		case CONST, VOLATILE, RESTRICT:
			ds.Quals |= qualifiers[t.tok]
		case VOID, CHAR, INT_KW, FLOAT_KW, DOUBLE, SHORT, LONG, SIGNED, UNSIGNED:
			switch t.tok {
			case VOID, CHAR, INT_KW, FLOAT_KW, DOUBLE:
				// Two type names in one declaration (char int).
				if p.declHasType {
					p.errorAt(p.offset(t.pos), "D_DECL_COMBO", "invalid type combination")
				}
			}
			switch {
			case basic != nil:
				basic.Words = append(basic.Words, t.lit)
				basic.To = t.end
			case ds.Type != nil:
				ds.Attrs = append(ds.Attrs, t.lit)
			default:
				basic = &BasicType{Span: Span{t.pos, t.end}, Words: []string{t.lit}}
				ds.Type = basic
			}
			switch t.tok {
			case VOID, CHAR, INT_KW, FLOAT_KW, DOUBLE:
				p.declHasType = true
			}
		case STRING_KW, TNAME:
			if ds.Type != nil && basic == nil || p.declHasType {
				// A second type name is the declared name: dtrace's
				// lexer would have returned it as an identifier.
				p.tok.tok = IDENT
				return p.endSpecs(ds)
			}
			mod, name := splitScope(t.lit)
			p.setNamedSpec(ds, &basic, &NamedType{Span: Span{t.pos, t.end}, Module: mod, Name: name})
			p.declHasType = true
		case STRUCT, UNION:
			st := p.parseStruct()
			p.setNamedSpec(ds, &basic, st)
			ds.To = st.End()
			continue
		case ENUM:
			et := p.parseEnum()
			p.setNamedSpec(ds, &basic, et)
			ds.To = et.End()
			continue
		default:
			return p.endSpecs(ds)
		}
		ds.To = t.end
		p.next()
	}
}

// setNamedSpec makes t the type of ds; basic-type keywords seen before
// move to Attrs.
func (p *parser) setNamedSpec(ds *DeclSpecs, basic **BasicType, t TypeSpec) {
	if *basic != nil {
		ds.Attrs = append(ds.Attrs, (*basic).Words...)
		*basic = nil
	} else if ds.Type != nil {
		p.errorAt(p.offset(t.Pos()), "D_DECL_COMBO", "invalid type combination")
	}
	ds.Type = t
}

func (p *parser) endSpecs(ds *DeclSpecs) *DeclSpecs {
	if ds.To == ds.From {
		p.syntaxError()
	}
	return ds
}

// splitScope splits "mod`name" at its last backquote.
func splitScope(s string) (module, name string) {
	if i := strings.LastIndexByte(s, '`'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return "", s
}

// scopeState is the part of the parser's state that dtrace keeps per
// declaration scope: struct bodies, parameter lists and array dimensions
// each open a scope.
type scopeState struct {
	declHasType, inTypedef bool
}

// openScope saves the declaration state and starts a fresh one. Callers
// open the scope before scanning past the token that opens it, as
// dtrace's grammar does.
func (p *parser) openScope() scopeState {
	s := scopeState{p.declHasType, p.inTypedef}
	p.declHasType, p.inTypedef = false, false
	return s
}

func (p *parser) closeScope(s scopeState) {
	p.declHasType, p.inTypedef = s.declHasType, s.inTypedef
}

// defineTag records the definition of a struct, union or enum tag; dtrace
// refuses to define one twice.
func (p *parser) defineTag(kind, module, tag string, pos Pos) {
	if tag == "" {
		return
	}
	n := kind + " " + tag
	if module != "" {
		n = kind + " " + module + "`" + tag
	}
	if p.tags[n] {
		p.errorAt(p.offset(pos), "D_DECL_TYPERED", "type redeclared: "+n)
	}
	p.tags[n] = true
}

// parseTag parses what follows the keyword of a struct, union or enum
// (kind) up to its body: the optional tag, into module, tag and to; it
// reports whether a body follows, whose '{' it has read after defining
// the tag and opening the scope of the members (outer restores the
// enclosing one).
func (p *parser) parseTag(kind string, module, tag *string, to *Pos) (body bool, outer scopeState) {
	p.next()
	if p.tok.tok == TNAME || p.tok.tok == IDENT {
		*module, *tag = splitScope(p.tok.lit)
		*to = p.tok.end
		p.declHasType = true
		p.next()
		if p.tok.tok != LBRACE {
			return false, outer
		}
	} else if p.tok.tok != LBRACE {
		p.syntaxError()
	}
	p.defineTag(kind, *module, *tag, p.tok.pos)
	outer = p.openScope()
	p.next()
	return true, outer
}

// parseStruct parses `struct tag`, `struct [tag] { members }` and the
// same with union.
func (p *parser) parseStruct() *StructType {
	defer p.nest()()
	st := &StructType{Span: Span{p.tok.pos, p.tok.end}, Union: p.tok.tok == UNION}
	kind := "struct"
	if st.Union {
		kind = "union"
	}
	body, outer := p.parseTag(kind, &st.Module, &st.Tag, &st.To)
	if !body {
		return st
	}
	st.Defined = true
	st.Members = []*Field{}
	for {
		f := &Field{Span: Span{From: p.tok.pos}}
		f.Specs = p.parseDeclSpecs(classNone)
		// An anonymous struct or union member (C11) declares no name:
		// its members are found as the enclosing struct's.
		if !anonMember(f.Specs, p.tok.tok) {
			p.commaList(func() bool {
				var d *Declarator
				if p.tok.tok == COLON {
					d = &Declarator{Span: Span{p.tok.pos, p.tok.pos}}
				} else {
					d = p.parseDeclarator(nameRequired)
				}
				if d.BitField = p.parseAfter(COLON, p.parseCond); d.BitField != nil {
					d.To = d.BitField.End()
				}
				f.Decls = append(f.Decls, d)
				return true
			})
		}
		f.To = p.tok.end
		p.declHasType = false
		p.want(SEMI)
		st.Members = append(st.Members, f)
		if p.tok.tok == RBRACE {
			break
		}
	}
	st.To = p.closeTag(outer)
	return st
}

// anonMember reports a member declaration that is an anonymous struct
// or union definition followed by tok, a semicolon.
func anonMember(ds *DeclSpecs, tok Token) bool {
	st, ok := ds.Type.(*StructType)
	return ok && tok == SEMI && st.Tag == "" && st.Defined
}

// parseEnum parses `enum tag` or `enum [tag] { A [= expr], ... }`.
func (p *parser) parseEnum() *EnumType {
	et := &EnumType{Span: Span{p.tok.pos, p.tok.end}}
	body, outer := p.parseTag("enum", &et.Module, &et.Tag, &et.To)
	if !body {
		return et
	}
	et.Defined = true
	p.commaList(func() bool {
		if p.tok.tok != IDENT {
			p.syntaxError()
		}
		e := &Enumerator{Span: Span{p.tok.pos, p.tok.end}}
		p.idents[p.tok.lit] = true
		e.Name = p.ident()
		if e.Value = p.parseAfter(ASSIGN, p.parseAssign); e.Value != nil {
			e.To = e.Value.End()
		}
		et.Values = append(et.Values, e)
		return true
	})
	if p.tok.tok != RBRACE {
		p.syntaxError()
	}
	et.To = p.closeTag(outer)
	return et
}

// closeTag ends the body of a struct, union or enum at its '}': it
// restores the enclosing scope, outer, and returns where the body ends.
func (p *parser) closeTag(outer scopeState) Pos {
	p.closeScope(outer)
	p.declHasType = true
	end := p.tok.end
	p.next()
	return end
}

// parseAfter skips a token tok and parses what follows it with parse;
// with no tok it returns nil.
func (p *parser) parseAfter(tok Token, parse func() Expr) Expr {
	if p.tok.tok != tok {
		return nil
	}
	p.next()
	return parse()
}

// wantIdent is ident of an identifier; another token is a syntax error.
func (p *parser) wantIdent() *Ident {
	if p.tok.tok != IDENT {
		p.syntaxError()
	}
	return p.ident()
}

// ident makes an Ident of the current token and advances.
func (p *parser) ident() *Ident {
	t := p.tok
	id := &Ident{Span: Span{t.pos, t.end}, Name: t.lit}
	if i := strings.LastIndexByte(t.lit, '`'); i >= 0 {
		id.Module, id.Name, id.Scoped = t.lit[:i], t.lit[i+1:], true
	}
	p.next()
	return id
}

// derive builds a declarator's type from the inside out.
type derive func(elem DeclType) DeclType

// qualifiers are the type qualifiers' tokens and bits.
var qualifiers = map[Token]int{CONST: Const, VOLATILE: Volatile, RESTRICT: Restrict}

// ptrInfo is one `*` of a declarator with its qualifiers.
type ptrInfo struct {
	pos, end Pos
	quals    int
}

// How a declarator may name what it declares.
const (
	nameRequired  = iota // declarations
	nameOptional         // parameters
	nameForbidden        // type names
)

// parseDeclarator parses a declarator; naming says whether it names
// something (nameRequired, nameOptional or nameForbidden).
func (p *parser) parseDeclarator(naming int) *Declarator {
	d := &Declarator{Span: Span{From: p.tok.pos, To: p.tok.pos}}
	build := p.parseDeclaratorInto(d, naming)
	d.Type = build(nil)
	return d
}

// parseDeclaratorInto parses `pointers direct-declarator` into d and
// returns the derivation it denotes.
func (p *parser) parseDeclaratorInto(d *Declarator, naming int) derive {
	defer p.nest()()
	// Pointers: `* const * p` is a pointer to a const pointer; the
	// pointer written last is the outermost.
	var ptrs []ptrInfo
	for p.tok.tok == MUL {
		pt := ptrInfo{pos: p.tok.pos, end: p.tok.end}
		p.next()
		for q := qualifiers[p.tok.tok]; q != 0; q = qualifiers[p.tok.tok] {
			pt.quals |= q
			pt.end = p.tok.end
			p.next()
		}
		ptrs = append(ptrs, pt)
		d.To = pt.end
	}
	var inner derive
	switch {
	case p.tok.tok == IDENT && naming != nameForbidden:
		d.Name = p.ident()
		d.To = d.Name.End()
	case p.tok.tok == LPAREN && naming == nameRequired:
		p.next()
		inner = p.parseDeclaratorInto(d, naming)
		d.To = p.tok.end
		p.want(RPAREN)
	case p.tok.tok == LPAREN:
		// `(` starts a nested abstract declarator when a declarator can
		// follow it, and a parameter list otherwise.
		lparen := p.tok.pos
		outer := p.openScope()
		p.next()
		switch p.tok.tok {
		case MUL, LPAREN, LBRACK, IDENT:
			p.closeScope(outer)
			inner = p.parseDeclaratorInto(d, naming)
			d.To = p.tok.end
			p.want(RPAREN)
		default:
			f := p.finishParams(lparen, outer)
			d.To = f.To
			suffixes := p.parseSuffixes(d)
			return p.compose(ptrs, append([]derive{func(e DeclType) DeclType {
				f.Elem = e
				return f
			}}, suffixes...), nil)
		}
	default:
		if naming == nameRequired {
			p.syntaxError()
		}
	}
	suffixes := p.parseSuffixes(d)
	return p.compose(ptrs, suffixes, inner)
}

// compose applies pointers, then suffixes (the first written is the
// outermost), then the nested declarator.
func (p *parser) compose(ptrs []ptrInfo, suffixes []derive, inner derive) derive {
	return func(base DeclType) DeclType {
		t := base
		for _, pt := range ptrs {
			t = &PointerDecl{Span: Span{pt.pos, pt.end}, Quals: pt.quals, Elem: t}
		}
		for i := len(suffixes) - 1; i >= 0; i-- {
			t = suffixes[i](t)
		}
		if inner != nil {
			t = inner(t)
		}
		return t
	}
}

// parseSuffixes parses the array and function suffixes of a direct
// declarator.
func (p *parser) parseSuffixes(d *Declarator) []derive {
	var out []derive
	for {
		switch p.tok.tok {
		case LBRACK:
			a := &ArrayDecl{Span: Span{From: p.tok.pos}}
			outer := p.openScope()
			p.next()
			switch {
			case p.tok.tok == RBRACK:
			case p.isDeclStart() || p.tok.tok == ELLIPSIS:
				p.commaList(func() bool {
					if p.tok.tok == ELLIPSIS {
						a.Variadic = true
						p.next()
						return false
					}
					prm := p.parseParam()
					p.declHasType = false
					a.Keys = append(a.Keys, &TypeName{Span: prm.Span, Specs: prm.Specs, Decl: prm.Decl})
					return true
				})
			default:
				a.Len = p.parseCond()
			}
			a.To = p.tok.end
			d.To = a.To
			if p.tok.tok != RBRACK {
				p.syntaxError()
			}
			p.closeScope(outer)
			p.next()
			out = append(out, func(e DeclType) DeclType { a.Elem = e; return a })
		case LPAREN:
			f := p.parseParams()
			d.To = f.To
			out = append(out, func(e DeclType) DeclType { f.Elem = e; return f })
		default:
			return out
		}
	}
}

// parseParams parses a parameter list in parentheses. The current token
// is the '('.
func (p *parser) parseParams() *FuncDecl {
	lparen := p.tok.pos
	outer := p.openScope()
	p.want(LPAREN)
	return p.finishParams(lparen, outer)
}

// finishParams parses a parameter list after its '(' up to and including
// the ')', then restores the declaration state outer.
func (p *parser) finishParams(lparen Pos, outer scopeState) *FuncDecl {
	f := &FuncDecl{Span: Span{From: lparen}}
	if p.tok.tok != RPAREN {
		p.commaList(func() bool {
			if p.tok.tok == ELLIPSIS {
				f.Variadic = true
				p.next()
				return false
			}
			f.Params = append(f.Params, p.parseParam())
			p.declHasType = false
			return true
		})
	}
	f.To = p.tok.end
	if p.tok.tok != RPAREN {
		p.syntaxError()
	}
	p.closeScope(outer)
	p.next()
	return f
}

// parseParam parses one parameter declaration.
func (p *parser) parseParam() *Param {
	prm := &Param{Span: Span{From: p.tok.pos}}
	prm.Specs = p.parseDeclSpecs(classC)
	prm.Decl = p.parseDeclarator(nameOptional)
	prm.To = prm.Specs.End()
	if prm.Decl.To > prm.To {
		prm.To = prm.Decl.To
	}
	return prm
}

// parseTypeName parses a type name: specifiers and an abstract
// declarator.
func (p *parser) parseTypeName() *TypeName {
	tn := &TypeName{Span: Span{From: p.tok.pos}}
	saveHas := p.declHasType
	p.declHasType = false
	tn.Specs = p.parseDeclSpecs(classNone)
	tn.To = tn.Specs.End()
	if d := p.parseDeclarator(nameForbidden); d.Type != nil {
		tn.Decl = d
		tn.To = d.End()
	}
	p.declHasType = saveHas
	return tn
}

// parseInline parses `inline TYPE NAME = EXPR;`.
func (p *parser) parseInline() *InlineDecl {
	d := &InlineDecl{Span: Span{From: p.tok.pos}}
	p.next()
	d.Specs = p.parseDeclSpecs(classD)
	d.Decl = p.parseDeclarator(nameRequired)
	p.declHasType = false
	p.want(ASSIGN)
	d.Value = p.parseAssign()
	d.Decl.Init = d.Value
	d.Decl.To = d.Value.End()
	if d.Decl.Name != nil {
		p.idents[d.Decl.Name.Name] = true
	}
	d.To = p.endTopLevel()
	return d
}

// parseTranslator parses `translator OUT < IN NAME > { members };`.
func (p *parser) parseTranslator() *TranslatorDecl {
	d := &TranslatorDecl{Span: Span{From: p.tok.pos}}
	p.next()
	d.Out = p.parseTypeName()
	// dtrace enters its translator-input state before it scans the
	// token after '<'.
	p.xlatorInput = true
	p.want(LSS)
	d.In = p.parseTypeName()
	d.Param = p.wantIdent()
	p.xlatorInput = false
	p.want(GTR)
	d.Members = []*XlateMember{}
	d.To = p.braced(func() {
		m := &XlateMember{Span: Span{From: p.tok.pos}}
		m.Name = p.wantIdent()
		p.want(ASSIGN)
		m.Value = p.parseAssign()
		m.To = p.tok.end
		p.want(SEMI)
		d.Members = append(d.Members, m)
	})
	return d
}

// braced parses the `{ items };` that ends a translator or provider
// declaration, calling item for each item up to the '}', and returns the
// declaration's end.
func (p *parser) braced(item func()) Pos {
	p.want(LBRACE)
	for p.tok.tok != RBRACE {
		item()
	}
	p.next()
	return p.endTopLevel()
}

// parseProvider parses `provider NAME { probe NAME(args) [: (args)]; };`.
func (p *parser) parseProvider() *ProviderDecl {
	d := &ProviderDecl{Span: Span{From: p.tok.pos}}
	p.next()
	d.Name = p.wantIdent()
	d.To = p.braced(func() {
		pp := &ProviderProbe{Span: Span{From: p.tok.pos}}
		p.want(PROBE)
		pp.Name = p.wantIdent()
		if p.tok.tok != LPAREN {
			p.syntaxError()
		}
		pp.Params = p.parseParams().Params
		if p.tok.tok == COLON {
			p.next()
			pp.XArgs = p.parseParams().Params
			if pp.XArgs == nil {
				pp.XArgs = []*Param{}
			}
		}
		pp.To = p.tok.end
		p.want(SEMI)
		d.Probes = append(d.Probes, pp)
	})
	return d
}

// ---------------------------------------------------------------------------
// Expressions

// parseExpr parses a comma expression.
func (p *parser) parseExpr() Expr {
	x := p.parseAssign()
	for p.tok.tok == COMMA {
		p.next()
		y := p.parseAssign()
		x = &BinaryExpr{Span{x.Pos(), y.End()}, COMMA, x, y}
	}
	return x
}

func isAssignOp(t Token) bool {
	switch t {
	case ASSIGN, ADDASS, SUBASS, MULASS, QUOASS, REMASS, ANDASS, ORASS,
		XORASS, SHLASS, SHRASS:
		return true
	}
	return false
}

// isUnaryForm reports whether x is a unary expression in C's grammar,
// the only kind that may stand left of an assignment operator.
func isUnaryForm(x Expr) bool {
	switch x.(type) {
	case *BinaryExpr, *AssignExpr, *CondExpr, *CastExpr:
		return false
	}
	return true
}

// parseAssign parses an assignment expression (right associative).
func (p *parser) parseAssign() Expr {
	defer p.nest()()
	x := p.parseCond()
	if isAssignOp(p.tok.tok) {
		if !isUnaryForm(x) {
			p.syntaxError()
		}
		op := p.tok.tok
		p.next()
		y := p.parseAssign()
		return &AssignExpr{Span{x.Pos(), y.End()}, op, x, y}
	}
	return x
}

// parseCond parses a conditional expression.
func (p *parser) parseCond() Expr {
	defer p.nest()()
	c := p.parseBinary(1)
	if p.tok.tok != QUEST {
		return c
	}
	p.next()
	x := p.parseExpr()
	p.want(COLON)
	y := p.parseCond()
	return &CondExpr{Span{c.Pos(), y.End()}, c, x, y}
}

// precedence returns a binary operator's precedence, 0 if t is not one.
func precedence(t Token) int {
	switch t {
	case LOR:
		return 1
	case LXOR:
		return 2
	case LAND:
		return 3
	case OR:
		return 4
	case XOR:
		return 5
	case AND:
		return 6
	case EQL, NEQ:
		return 7
	case LSS, GTR, LEQ, GEQ:
		return 8
	case SHL, SHR:
		return 9
	case ADD, SUB:
		return 10
	case MUL, QUO, REM:
		return 11
	}
	return 0
}

// parseBinary parses binary operators of precedence prec and above, all
// left associative.
func (p *parser) parseBinary(prec int) Expr {
	x := p.parseCast()
	for {
		op := p.tok.tok
		q := precedence(op)
		if q < prec || op == QUO && p.tok.epred {
			return x
		}
		p.next()
		y := p.parseBinary(q + 1)
		x = &BinaryExpr{Span{x.Pos(), y.End()}, op, x, y}
	}
}

// parseCast parses a cast expression.
func (p *parser) parseCast() Expr {
	defer p.nest()()
	if p.tok.tok != LPAREN {
		return p.parseUnary()
	}
	lparen := p.tok.pos
	p.next()
	if p.isTypeStart() {
		tn := p.parseTypeName()
		p.want(RPAREN)
		x := p.parseCast()
		return &CastExpr{Span{lparen, x.End()}, tn, x}
	}
	return p.parsePostfix(p.parseParenRest(lparen))
}

// parseParenRest parses `expr )` after a '(' at lparen.
func (p *parser) parseParenRest(lparen Pos) Expr {
	x := p.parseExpr()
	end := p.tok.end
	p.want(RPAREN)
	return &ParenExpr{Span{lparen, end}, x}
}

// parseUnary parses a unary expression.
func (p *parser) parseUnary() Expr {
	defer p.nest()()
	t := p.tok
	switch t.tok {
	case INC, DEC:
		p.next()
		x := p.parseUnary()
		return &UnaryExpr{Span{t.pos, x.End()}, t.tok, x}
	case AND, MUL, ADD, SUB, BNEG, NOT:
		p.next()
		x := p.parseCast()
		return &UnaryExpr{Span{t.pos, x.End()}, t.tok, x}
	case SIZEOF:
		p.next()
		if p.tok.tok == LPAREN {
			lparen := p.tok.pos
			p.next()
			if p.isTypeStart() {
				tn := p.parseTypeName()
				end := p.tok.end
				p.want(RPAREN)
				return &SizeofExpr{Span: Span{t.pos, end}, Type: tn}
			}
			x := p.parsePostfix(p.parseParenRest(lparen))
			return &SizeofExpr{Span: Span{t.pos, x.End()}, X: x}
		}
		x := p.parseUnary()
		return &SizeofExpr{Span: Span{t.pos, x.End()}, X: x}
	case STRINGOF:
		p.next()
		x := p.parseUnary()
		return &StringofExpr{Span{t.pos, x.End()}, x}
	}
	return p.parsePostfix(p.parsePrimary())
}

// parsePostfix parses the postfix operators after x.
func (p *parser) parsePostfix(x Expr) Expr {
	for {
		switch p.tok.tok {
		case LBRACK:
			p.next()
			args := p.parseArgs()
			end := p.tok.end
			p.want(RBRACK)
			if a, ok := x.(*AggExpr); ok && a.Keys == nil {
				a.Keys = args
				a.To = end
				continue
			}
			x = &IndexExpr{Span{x.Pos(), end}, x, args}
		case LPAREN:
			p.next()
			var args []Expr
			if p.tok.tok != RPAREN {
				args = p.parseArgs()
			}
			end := p.tok.end
			p.want(RPAREN)
			x = &CallExpr{Span{x.Pos(), end}, x, args}
		case DOT, ARROW:
			arrow := p.tok.tok == ARROW
			p.next()
			name := p.wantIdent()
			x = &MemberExpr{Span{x.Pos(), name.End()}, x, arrow, name}
		case INC, DEC:
			x = &PostfixExpr{Span{x.Pos(), p.tok.end}, p.tok.tok, x}
			p.next()
		default:
			return x
		}
	}
}

// parseArgs parses a non-empty argument list.
func (p *parser) parseArgs() []Expr {
	var args []Expr
	p.commaList(func() bool {
		args = append(args, p.parseAssign())
		return true
	})
	return args
}

// commaList parses a list whose items are separated by commas: item
// parses one, and reports false where the list must end (after "...").
func (p *parser) commaList(item func() bool) {
	for item() && p.tok.tok == COMMA {
		p.next()
	}
}

// parsePrimary parses a primary expression and the D forms that behave
// like one (offsetof, xlate, self->x, this->x).
func (p *parser) parsePrimary() Expr {
	t := p.tok
	switch t.tok {
	case IDENT:
		id := p.ident()
		if id.Name == "flow" && !id.Scoped && id.Module == "" && p.tok.tok == ARROW {
			// flow->x, beyond DTrace: `flow` is no keyword, so that
			// programs naming a variable flow still parse.
			p.next()
			if p.tok.tok != IDENT {
				p.syntaxError()
			}
			name := p.ident()
			return &ScopedVar{Span{id.Pos(), name.End()}, ScopeFlow, name}
		}
		return id
	case INT:
		p.next()
		return &IntLit{Span: Span{t.pos, t.end}, Text: t.lit, Value: t.val,
			Suffix: t.suffix, IsChar: t.isChar, Overflow: t.overflow}
	case STRING:
		p.next()
		return &StringLit{Span{t.pos, t.end}, t.str}
	case MACRO, QMACRO:
		p.next()
		return &MacroVar{Span{t.pos, t.end}, t.str, t.tok == QMACRO}
	case AGG:
		p.next()
		return &AggExpr{Span: Span{t.pos, t.end}, Name: t.str}
	case LPAREN:
		p.next()
		return p.parseParenRest(t.pos)
	case SELF, THIS:
		p.next()
		if p.tok.tok != ARROW {
			return &Ident{Span: Span{t.pos, t.end}, Name: t.lit}
		}
		p.next()
		name := p.wantIdent()
		scope := ScopeSelf
		if t.tok == THIS {
			scope = ScopeThis
		}
		return &ScopedVar{Span{t.pos, name.End()}, scope, name}
	case OFFSETOF:
		p.next()
		p.want(LPAREN)
		tn := p.parseTypeName()
		p.want(COMMA)
		if p.tok.tok != IDENT && p.tok.tok != TNAME {
			p.syntaxError()
		}
		m := p.ident()
		end := p.tok.end
		p.want(RPAREN)
		return &OffsetofExpr{Span{t.pos, end}, tn, []*Ident{m}}
	case XLATE:
		p.next()
		p.want(LSS)
		tn := p.parseTypeName()
		p.want(GTR)
		p.want(LPAREN)
		x := p.parseExpr()
		end := p.tok.end
		p.want(RPAREN)
		return &XlateExpr{Span{t.pos, end}, tn, x}
	}
	p.syntaxError()
	return nil
}
