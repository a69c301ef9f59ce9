package check

import (
	"fmt"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// checker holds the state of one Check call.
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
	locals     map[string]*Var
	aggs       map[string]*Agg
	inlines    map[string]*Inline
	enumConsts map[string]*EnumConst
	externs    map[string]types.Type
	nvars      [3]int
	usedArgs   []bool

	flags map[syntax.Expr]exprFlags

	clause   *Clause // the clause being checked, nil outside clauses
	clsFlags int
	fresh    *Var // a variable created by the left side of an assignment

	xlParam   *Var // a translator's input parameter while checking it
	xlParamOn bool

	scratchSize int64 // the scratchsize option, 0 if unknown
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
		locals:     map[string]*Var{},
		aggs:       map[string]*Agg{},
		inlines:    map[string]*Inline{},
		enumConsts: map[string]*EnumConst{},
		externs:    map[string]types.Type{},
		flags:      map[syntax.Expr]exprFlags{},
		usedArgs:   make([]bool, len(conf.MacroArgs)),
	}
	c.strType = c.dScope.Lookup("string").(*types.String)
	c.scratchSize = conf.ScratchSize
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
func (c *checker) finish() {
	if len(c.errs) > 0 {
		return
	}
	if !c.conf.DefaultArgs {
		for i := len(c.usedArgs) - 1; i >= 1; i-- {
			if !c.usedArgs[i] {
				c.errorf(syntax.NoPos, D_MACRO_UNUSED, "extraneous argument '%s' ($%d is not referenced)", c.conf.MacroArgs[i], i)
				return
			}
		}
	}
}
