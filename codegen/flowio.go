package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
)

// Flow variables across block I/O (docs/FLOW.md): a bio is filed under
// its address in dt_flowbio with the flow of the thread that submits it
// (__flow_bio, in the submitter's context); io:::done takes the flow of
// its bio (a request's first) for that firing only (__flow_io
// sets mstate's MStateFlowKey, which flowKey reads), leaving the
// interrupted thread's own flow alone; the bio's entry goes when the bio
// completes (__flow_bio_done).

// subrFlowBio compiles __flow_bio(bio): the current thread's flow, if it
// has one, is filed under the bio it submits.
func (f *fn) subrFlowBio(c *syntax.CallExpr, _ string) asm.Register {
	return f.flowFileUnder(c, abi.MapFlowBio)
}

// subrFlowBioDone compiles __flow_bio_done(bio): a completed bio's flow
// goes.
func (f *fn) subrFlowBioDone(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 1, 1)
	f.flowDelete(abi.MapFlowBio, f.flowArg(c, 0))
	return f.zero()
}

// subrFlowIO compiles __flow_io(bio): for the rest of this firing the
// flow is the one filed under bio (none when it has none), in place of
// the current thread's. A request without a bio (a flush) takes key 1,
// which no bio has.
func (f *fn) subrFlowIO(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 1, 1)
	r, has := f.expr(c.Args[0]), f.label("fiobio")
	f.emit(asm.JNE.Imm(r, 0, has), asm.Mov.Imm(r, 1))
	f.mark(has)
	f.emit(asm.StoreMem(regScratch, int16(f.g.layout.MState)+abi.MStateFlowKey, r, asm.DWord))
	f.free(r)
	f.g.useMap(abi.MapFlowBio)
	return f.zero()
}
