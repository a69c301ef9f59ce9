package check

import (
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
	"github.com/dtrace-go/dtrace/format"
)

// Check checks the programs (which share one namespace, as the -s and -n
// sources of one dtrace invocation do) and returns the results. The error,
// if not nil, is an ErrorList whose first element is what dtrace would
// report; Info is returned even then, partially filled.
func Check(fset *syntax.FileSet, progs []*syntax.Program, conf *Config) (*Info, error) {
	if conf == nil {
		conf = &Config{}
	}
	c := newChecker(fset, conf)
	for i, p := range progs {
		c.progIndex = i
		if i == conf.LibraryPrograms {
			// The D libraries may use all of D; the user's programs
			// only the requested version.
			c.reduceVersion(conf.Version)
		}
		c.program(p)
	}
	c.finish(progs)
	return c.info, c.errs.Err()
}

func newInfo(strsize int64) *Info {
	return &Info{
		Types:      map[syntax.Expr]TypeAndValue{},
		Uses:       map[syntax.Expr]Object{},
		Defs:       map[*syntax.Declarator]Object{},
		Calls:      map[*syntax.CallExpr]*Func{},
		Members:    map[*syntax.MemberExpr]*Member{},
		Xlates:     map[*syntax.XlateExpr]*Translator{},
		Formats:    map[*syntax.CallExpr]*format.Format{},
		TypeNames:  map[*syntax.TypeName]types.Type{},
		ArgXlators: map[*syntax.IndexExpr]*Translator{},
		StrSize:    strsize,
		Scope:      types.NewScope("D"),
	}
}
