package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// traceoff() and traceon() (beyond DTrace, ftrace's triggers) close and
// open the recording gate, the word abi.StateTraceOff of dt_state, that
// flush checks before it sends a record while tracing is active: probes
// stay attached and aggregations keep counting. The clause whose
// traceoff() closed the gate is written whole (it shows the event that
// stopped tracing; mstate's msTraceOff marks it), and so is the clause
// that calls traceon(). BEGIN, END, exit() and fault records, and the
// records of snapshot(), commit() and discard(), always go out.

// actionTraceoff compiles traceoff([n]). The gate is closed with an
// atomic exchange so that only the firing that finds it open counts as
// turning tracing off. With n, a firing that finds the gate open takes
// one of the call's n counts (takeCount) and gives it back when another
// CPU closed the gate first, so that exactly n firings turn tracing off
// in the whole run however many CPUs race.
func (f *fn) actionTraceoff(c *syntax.CallExpr, name string, act program.Action) {
	f.need(c, 0, 1)
	// An action makes a record (the probe line without -q), as exit() does.
	f.recOpen()
	done := f.label("toffdone")
	st, v := f.alloc(), f.alloc()
	f.emit(asm.LoadMapValue(st, 0, 0).WithReference(abi.MapState))
	var p asm.Register
	if len(c.Args) == 1 {
		// Off already: nothing to do, and no count taken.
		f.emit(asm.LoadMem(v, st, abi.StateTraceOff, asm.Word), asm.JNE.Imm(v, 0, done))
		p = f.takeCount(c, done)
	}
	f.emit(asm.Mov.Imm(v, 1), atomicMem(asm.Xchg, st, v, asm.Word, abi.StateTraceOff))
	if len(c.Args) == 1 {
		closed := f.label("toffclosed")
		f.emit(asm.JEq.Imm(v, 0, closed),
			asm.Mov.Imm(v, -1),
			atomicMem(asm.AddAtomic, p, v, asm.DWord, 0),
			asm.Ja.Label(done))
		f.mark(closed)
		f.free(p)
	} else {
		f.emit(asm.JNE.Imm(v, 0, done))
	}
	f.emit(storeImm(regScratch, int16(f.g.layout.MState)+msTraceOff, 1, asm.DWord))
	f.mark(done)
	f.free(v)
	f.free(st)
}

// actionTraceon compiles traceon(): it opens the gate, so that this
// clause's records are written.
func (f *fn) actionTraceon(c *syntax.CallExpr, name string, act program.Action) {
	f.need(c, 0, 0)
	f.recOpen()
	st := f.alloc()
	f.emit(asm.LoadMapValue(st, 0, 0).WithReference(abi.MapState),
		storeImm(st, abi.StateTraceOff, 0, asm.Word))
	f.free(st)
}

// gateSend emits the recording gate's check before a record of e is
// sent: it jumps to skip while the gate is closed, tracing is active
// and the clause did not close the gate itself. Records of the control
// actions always go out.
func (f *fn) gateSend(e *program.RecordSpec, skip string) {
	if !f.g.gated {
		return
	}
	for _, r := range e.Records {
		switch r.Action {
		case program.ActExit, program.ActSnapshot, program.ActCommit, program.ActDiscard:
			return
		}
	}
	send := f.label("gateopen")
	r := f.alloc()
	f.emit(asm.LoadMapValue(r, 0, 0).WithReference(abi.MapState),
		asm.LoadMem(r, r, abi.StateTraceOff, asm.Word),
		asm.JEq.Imm(r, 0, send))
	if f.traceoff {
		f.emit(asm.LoadMem(r, regScratch, int16(f.g.layout.MState)+msTraceOff, asm.DWord),
			asm.JNE.Imm(r, 0, send))
	}
	f.emit(asm.LoadMapValue(r, 0, 0).WithReference(abi.MapState),
		asm.LoadMem(r, r, abi.StateActivity, asm.Word),
		asm.JEq.Imm(r, abi.ActivityActive, skip))
	f.mark(send)
	f.free(r)
}

// callsTo reports whether n holds a call to a function named name.
func callsTo(n syntax.Node, name string) bool {
	found := false
	syntax.InspectCode(n, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok {
			if id, ok := c.Fun.(*syntax.Ident); ok && id.Name == name {
				found = true
			}
		}
		return !found
	})
	return found
}
