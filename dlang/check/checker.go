package check

import (
	"fmt"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// checker holds the state of one Check call.
// defaultScratchSize is dtrace's scratchsize when the option is not set:
// the limit of a constant alloca() or copyin() size.
const defaultScratchSize = 256

type checker struct {
	fset *syntax.FileSet
	conf *Config
	info *Info
	errs ErrorList

	cScope, dScope, fallback *types.Scope
	opaque                   map[string]types.Type
	strType                  *types.String

	builtins   map[string]*Builtin
	funcs      map[string]*funcInfo
	globals    map[string]*Var
	threads    map[string]*Var
	flows      map[string]*Var // flow->x
	locals     map[string]*Var
	aggs       map[string]*Agg
	inlines    map[string]*Inline
	enumConsts map[string]*EnumConst
	externs    map[string]types.Type
	nvars      [5]int
	usedArgs   []bool

	// symTypes holds the types extern declarations (the program's and
	// the D library's) give kernel symbols by name, for the symbols
	// whose type the kernel's BTF does not give.
	symTypes map[string]types.Type
	// addrOperand is the operand of the unary & being checked: the
	// address of a kernel symbol without a type may still be taken.
	addrOperand syntax.Expr

	descs     map[*syntax.ProbeClause][]string // expanded probe descriptions
	lateTypes map[*Builtin]string              // builtin types to resolve on use
	flags     map[syntax.Expr]exprFlags
	nonAlloca map[*Var]bool // variables assigned pointers that are not alloca

	clause   *Clause // the clause being checked, nil outside clauses
	clsFlags int
	fresh    *Var // a variable created by the left side of an assignment

	params     map[string]*Var // parameters in scope (inline, translator)
	openArrays bool            // [] is allowed (extern declarations)

	scratchSize    int64 // the scratchsize option, 0 if unknown
	defaultArgs    bool  // the defaultargs option (Config or pragma)
	argRef         bool  // the argref option
	srcCache       map[string][]byte
	deferred       []func() bool   // checks dtrace makes while generating code
	progIndex      int             // index of the program being checked
	amin           *Attr           // the amin option, if set
	attrOf         map[string]Attr // attributes given by #pragma D attributes
	pendingPragmas []pendingPragma
	curStmt        syntax.Stmt // the expression statement being checked
	predEnd        syntax.Pos  // the closing slash of the predicate being checked
}

// stmtPos is where dtrace reports errors about a statement's action: its
// last token.
func (c *checker) stmtPos(n syntax.Node) syntax.Pos {
	if c.curStmt != nil {
		return c.last(c.curStmt)
	}
	return c.last(n)
}

func newChecker(fset *syntax.FileSet, conf *Config) *checker {
	strsize := conf.StrSize
	if strsize <= 0 {
		strsize = 256
	}
	c := &checker{
		fset:       fset,
		conf:       conf,
		info:       newInfo(strsize),
		cScope:     types.CScope(),
		dScope:     types.DScope(strsize),
		fallback:   types.FallbackScope(),
		opaque:     map[string]types.Type{},
		globals:    map[string]*Var{},
		threads:    map[string]*Var{},
		flows:      map[string]*Var{},
		locals:     map[string]*Var{},
		aggs:       map[string]*Agg{},
		inlines:    map[string]*Inline{},
		enumConsts: map[string]*EnumConst{},
		externs:    map[string]types.Type{},
		symTypes:   map[string]types.Type{},
		flags:      map[syntax.Expr]exprFlags{},
		nonAlloca:  map[*Var]bool{},
		descs:      map[*syntax.ProbeClause][]string{},
		attrOf:     map[string]Attr{},
		amin:       conf.AttrMin,
		lateTypes:  map[*Builtin]string{},
		usedArgs:   make([]bool, len(conf.MacroArgs)),
	}
	c.strType = c.dScope.Lookup("string").(*types.String)
	c.scratchSize = conf.ScratchSize
	if c.scratchSize <= 0 {
		c.scratchSize = defaultScratchSize
	}
	c.defaultArgs, c.argRef = conf.DefaultArgs, conf.ArgRef
	c.initBuiltins()
	c.inlines["NULL"] = &Inline{Name: "NULL", Type: types.Long, Value: &syntax.IntLit{Text: "0"}}
	c.info.Types[c.inlines["NULL"].Value] = TypeAndValue{Type: types.Int, Value: intConst(0)}
	return c
}

// errorf records an error at pos.
func (c *checker) errorf(pos syntax.Pos, tag Tag, format string, args ...any) {
	e := &Error{Pos: pos, Tag: tag, Msg: fmt.Sprintf(format, args...)}
	if c.fset != nil && pos.IsValid() {
		e.Position = c.fset.Position(pos)
	}
	c.errs = append(c.errs, e)
}

// finish applies the whole-program checks.
func (c *checker) finish(progs []*syntax.Program) {
	if len(c.errs) > 0 {
		return
	}
	for _, p := range c.pendingPragmas {
		if c.globals[p.name] == nil && c.inlines[p.name] == nil {
			c.errorf(p.pos, D_PRAGMA_UNUSED, "unused #pragma %s", "attributes")
			return
		}
	}
	// An empty translation unit is an error (library files aside).
	for i, p := range progs {
		if i >= c.conf.LibraryPrograms && p != nil && len(p.Decls) == 0 && !c.conf.Empty {
			c.errorf(p.End(), D_EMPTY, "empty D program translation unit")
			return
		}
	}
	if !c.defaultArgs && !c.argRef {
		for i := len(c.usedArgs) - 1; i >= 1; i-- {
			if !c.usedArgs[i] {
				c.errorf(syntax.NoPos, D_MACRO_UNUSED, "extraneous argument '%s' ($%d is not referenced)", c.conf.MacroArgs[i], i)
				return
			}
		}
	}
}

// after returns where dtrace reports an error about node n. dtrace's
// lexer has usually read one token past a construct when the parser
// builds its node, and errors quote that line; so the position is the
// start of the first token after n. Without Config.Source it is n's own
// position.
func (c *checker) after(n syntax.Node) syntax.Pos {
	if c.conf.Source == nil || c.fset == nil {
		return n.Pos()
	}
	end := n.End()
	f := c.fset.File(end)
	if f == nil {
		return n.Pos()
	}
	src := c.source(f.Name())
	off := f.Offset(end)
	if src == nil || off < 0 || off > len(src) {
		return n.Pos()
	}
	p := c.skipSpace(f, src, off)
	if p == c.predEnd && p.IsValid() {
		p = c.skipSpace(f, src, f.Offset(p)+1)
	}
	return p
}

// skipSpace returns the position of the first byte at or after off that
// is not white space or inside a comment.
func (c *checker) skipSpace(f *syntax.File, src []byte, off int) syntax.Pos {
	for off < len(src) {
		switch {
		case src[off] == ' ' || src[off] == '\t' || src[off] == '\n' || src[off] == '\r' || src[off] == '\f' || src[off] == '\v':
			off++
		case off+1 < len(src) && src[off] == '/' && src[off+1] == '*':
			i := indexFrom(src, off+2, "*/")
			if i < 0 {
				off = len(src)
			} else {
				off = i + 2
			}
		case off+1 < len(src) && src[off] == '/' && src[off+1] == '/':
			i := indexFrom(src, off, "\n")
			if i < 0 {
				off = len(src)
			} else {
				off = i
			}
		default:
			return f.Pos(off)
		}
	}
	return f.Pos(len(src))
}

// last returns the position of n's last byte, where dtrace reports
// errors about constructs it reduces without reading further (a clause
// after its closing brace, a declaration after its semicolon).
func (c *checker) last(n syntax.Node) syntax.Pos {
	if n.End() > n.Pos() {
		return n.End() - 1
	}
	return n.Pos()
}

func (c *checker) source(name string) []byte {
	if b, ok := c.srcCache[name]; ok {
		return b
	}
	b := c.conf.Source(name)
	if c.srcCache == nil {
		c.srcCache = map[string][]byte{}
	}
	c.srcCache[name] = b
	return b
}

func indexFrom(b []byte, from int, s string) int {
	for i := from; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			return i
		}
	}
	return -1
}

// reserve returns a slot in the deferred checks, for a check that must run
// before those recorded while checking its operands.
func (c *checker) reserve() int {
	c.deferred = append(c.deferred, nil)
	return len(c.deferred) - 1
}

// defer1 records a deferred check in slot, or at the end if slot < 0.
func (c *checker) defer1(slot int, f func() bool) {
	if slot >= 0 {
		c.deferred[slot] = f
		return
	}
	c.deferred = append(c.deferred, f)
}

// runDeferred runs the deferred checks of a clause until one fails.
func (c *checker) runDeferred() {
	d := c.deferred
	c.deferred = nil
	if len(c.errs) > 0 {
		return
	}
	for _, f := range d {
		if f != nil && !f() {
			return
		}
	}
}
