package dtrace

import (
	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
)

// tupleRegs is dtrace's default number of tuple registers (the tregs
// option; DIF_DTR_NREGS).
const tupleRegs = 8

// checkTuples refuses a program whose tuples (associative array keys,
// aggregation keys) have more members than dtrace's code generator
// accepts: it fails once a tuple's member index passes tregs, with
// "Insufficient tuple registers to generate code" and no line.
func (h *Handle) checkTuples(ast *syntax.Program, info *check.Info) error {
	limit := int64(tupleRegs)
	if h.opts.TRegs > 0 {
		limit = h.opts.TRegs
	}
	var err error
	syntax.Inspect(ast, func(n syntax.Node) bool {
		if err != nil {
			return false
		}
		k := 0
		switch x := n.(type) {
		case *syntax.IndexExpr:
			if v, ok := info.Uses[x.X].(*check.Var); ok && v.Keys != nil {
				k = len(x.Index)
			}
		case *syntax.AggExpr:
			k = len(x.Keys)
		}
		if int64(k) > limit+1 {
			err = &CompileError{Msg: "Insufficient tuple registers to generate code"}
		}
		return true
	})
	return err
}
