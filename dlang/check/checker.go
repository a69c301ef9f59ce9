package check

import (
	"fmt"

	"github.com/dtrace-go/dtrace/dlang/syntax"
)

// checker holds the state of one Check call.
type checker struct {
	fset *syntax.FileSet
	conf *Config
	info *Info
	errs ErrorList
}

func newChecker(fset *syntax.FileSet, conf *Config) *checker {
	strsize := conf.StrSize
	if strsize <= 0 {
		strsize = 256
	}
	return &checker{fset: fset, conf: conf, info: newInfo(strsize)}
}

// errorf records an error at pos.
func (c *checker) errorf(pos syntax.Pos, tag Tag, format string, args ...any) {
	e := &Error{Pos: pos, Tag: tag, Msg: fmt.Sprintf(format, args...)}
	if c.fset != nil && pos.IsValid() {
		e.Position = c.fset.Position(pos)
	}
	c.errs = append(c.errs, e)
}

func (c *checker) program(p *syntax.Program) {}

func (c *checker) finish() {}
