package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// chill(nanoseconds), destructive, spins on the clock in probe context as
// illumos's dtrace_action_chill does: each CPU may chill at most chillMax
// nanoseconds in any chillInterval (dtrace_chill_max, dtrace_chill_interval),
// counted in dt_cpustate (abi.CPUChillMark, abi.CPUChilled); a chill that
// would go past that, or a negative one, is an illegal operation and does
// not spin. The budget is this consumer's: each dtrace process has its own
// dt_cpustate, where illumos keeps one per CPU for all consumers.
//
// The spin is bpf_loop over the callback dt_chill, which reads the clock
// chillSpins times per step and stops at the deadline; bpf_loop's most
// steps (1 << 23) times chillSpins clock reads outlast chillMax.
const (
	chillMax      = 500_000_000   // ns of chill per CPU per interval
	chillInterval = 1_000_000_000 // ns
	chillSpins    = 8
	chillSteps    = 1 << 23
	chillFunc     = "dt_chill"
)

// chillCallback builds dt_chill(index, ctx): ctx points to a stack slot
// holding the deadline (bpf_ktime_get_ns). It returns 1 (stop) once the
// clock has reached the deadline, 0 to go on.
func (g *gen) chillCallback() asm.Instructions {
	f := newFn(g, chillFunc)
	stop := f.label("stop")
	f.emit(asm.LoadMem(asm.R6, asm.R2, 0, asm.DWord).WithSymbol(chillFunc).WithSource(asm.Comment(chillFunc)))
	for range chillSpins {
		f.emit(asm.FnKtimeGetNs.Call(), asm.JGE.Reg(asm.R0, asm.R6, stop))
	}
	f.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	f.mark(stop)
	f.emit(asm.Mov.Imm(asm.R0, 1), asm.Return())
	return f.insns
}

// actionChill compiles chill(ns): the spin (or the illegal-operation
// fault) and an empty record item, so that the firing is reported as
// any action's is (the probe line unless quiet).
func (f *fn) actionChill(c *syntax.CallExpr, _ string, act program.Action) {
	f.recItem(program.Record{Action: act, FormatID: -1, AggID: -1, Offset: f.recAlloc(0, 1)})
	g := f.g
	g.needFunc(chillFunc, g.chillCallback)
	v := f.onlyArg(c)
	st := int16(f.tmp(8))
	f.emit(asm.StoreMem(regScratch, st, v, asm.DWord))
	f.free(v)
	f.call(asm.FnKtimeGetNs)
	now := f.result()
	f.emit(storeImm(asm.R10, stackMisc, 0, asm.DWord))
	f.call(asm.FnMapLookupElem, mapOp(abi.MapCPUState), operand{kind: opStack, imm: stackMisc})
	p := f.result()
	done, inInterval, bad, ok := f.label("chilldone"), f.label("chillin"), f.label("chillbad"), f.label("chillok")
	f.emit(asm.JEq.Imm(p, 0, done))
	// A new interval: the budget starts again.
	t := f.alloc()
	lim := f.alloc()
	f.movImm(lim, chillInterval)
	f.emit(asm.LoadMem(t, p, abi.CPUChillMark, asm.DWord), asm.Mov.Reg(asm.R0, now), asm.Sub.Reg(asm.R0, t),
		asm.JLE.Reg(asm.R0, lim, inInterval),
		asm.StoreMem(p, abi.CPUChillMark, now, asm.DWord), storeImm(p, abi.CPUChilled, 0, asm.DWord))
	f.mark(inInterval)
	// lim = what is left of the budget; v must be within it.
	f.movImm(lim, chillMax)
	v = f.alloc()
	f.emit(asm.LoadMem(t, p, abi.CPUChilled, asm.DWord), asm.Sub.Reg(lim, t),
		asm.LoadMem(v, regScratch, st, asm.DWord),
		asm.JSLT.Imm(v, 0, bad), asm.JSGT.Reg(v, lim, bad), asm.Ja.Label(ok))
	f.mark(bad)
	f.fault(abi.FltIllOp, 0, false)
	f.mark(ok)
	f.emit(asm.Add.Reg(t, v), asm.StoreMem(p, abi.CPUChilled, t, asm.DWord),
		asm.Add.Reg(now, v), asm.StoreMem(asm.R10, stackMisc, now, asm.DWord))
	f.free(t, lim, v, p, now)
	f.call(asm.FnLoop, imm(chillSteps), operand{kind: opFunc, name: chillFunc}, operand{kind: opStack, imm: stackMisc}, imm(0))
	f.mark(done)
}
