package codegen

import (
	"github.com/cilium/ebpf/asm"
	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// This file compiles actions: calls whose effect is a record item for the
// consumer (or a change of kernel-side state such as exit and speculate).

// actionGens are the generators of the actions, by the FuncID of their
// row in check's table, each with the program.Action its record items
// carry: an action's generator and its entry are in this file.
func actionGens() map[check.FuncID]funcGen {
	return map[check.FuncID]funcGen{
		check.FuncBreakpoint:  {stmt: (*fn).actionMark, act: program.ActBreakpoint},
		check.FuncChill:       {stmt: (*fn).actionChill, act: program.ActChill},
		check.FuncClear:       {stmt: (*fn).actionAggOp, act: program.ActClear},
		check.FuncCommit:      {stmt: (*fn).actionCommit, act: program.ActCommit},
		check.FuncDenormalize: {stmt: (*fn).actionAggOp, act: program.ActDenormalize},
		check.FuncDiscard:     {stmt: (*fn).actionCommit, act: program.ActDiscard},
		check.FuncExit:        {stmt: (*fn).actionExit, act: program.ActExit},
		check.FuncFreopen:     {stmt: (*fn).actionPrintf, act: program.ActFreopen},
		check.FuncFtruncate:   {stmt: (*fn).actionMark, act: program.ActFtruncate},
		check.FuncJstack:      {stmt: (*fn).actionStack, act: program.ActUStack},
		check.FuncNormalize:   {stmt: (*fn).actionAggOp, act: program.ActNormalize},
		check.FuncPcap:        {stmt: (*fn).actionPcap, act: program.ActPcap},
		check.FuncPanic:       {stmt: (*fn).actionMark, act: program.ActPanic},
		check.FuncPrint:       {stmt: (*fn).actionPrint, act: program.ActPrint},
		check.FuncPrinta:      {stmt: (*fn).actionPrinta, act: program.ActPrinta},
		check.FuncPrintf:      {stmt: (*fn).actionPrintf, act: program.ActPrintf},
		check.FuncRaise:       {stmt: (*fn).actionMark, act: program.ActRaise},
		check.FuncSetopt:      {stmt: (*fn).actionSetopt, act: program.ActSetopt},
		check.FuncSpeculate:   {stmt: (*fn).actionSpeculate, act: program.ActSpeculate},
		check.FuncStack:       {stmt: (*fn).actionStack, act: program.ActStack},
		check.FuncStop:        {stmt: (*fn).actionMark, act: program.ActStop},
		check.FuncSnapshot:    {stmt: (*fn).actionSnapshot, act: program.ActSnapshot},
		check.FuncSystem:      {stmt: (*fn).actionPrintf, act: program.ActSystem},
		check.FuncTrace:       {stmt: (*fn).actionTrace, act: program.ActTrace},
		check.FuncTracemem:    {stmt: (*fn).actionTracemem, act: program.ActTracemem},
		check.FuncTraceoff:    {stmt: (*fn).actionTraceoff, act: program.ActTraceoff},
		check.FuncTraceon:     {stmt: (*fn).actionTraceon, act: program.ActTraceon},
		check.FuncTrunc:       {stmt: (*fn).actionAggOp, act: program.ActTrunc},
		check.FuncUstack:      {stmt: (*fn).actionStack, act: program.ActUStack},
	}
}

// actionTrace compiles trace() as a statement.
func (f *fn) actionTrace(c *syntax.CallExpr, name string, act program.Action) {
	f.need(c, 1, 1)
	if a := symAction(c.Args[0]); a != program.ActNone {
		f.recItem(f.storeSym(c.Args[0], a))
	} else {
		f.recItem(f.storeValue(c.Args[0], act))
	}
}

// actionSym compiles sym(), func(), mod(), usym(), ufunc(), umod(), uaddr() as a statement.
func (f *fn) actionSym(c *syntax.CallExpr, name string, act program.Action) {
	// As a statement, a symbol subroutine is the action that
	// traces its symbol.
	f.need(c, 1, 1)
	f.recItem(f.storeSym(c, act))
}

// actionPrint compiles print() as a statement.
func (f *fn) actionPrint(c *syntax.CallExpr, name string, act program.Action) {
	f.need(c, 1, 1)
	f.recItem(f.storePrint(c.Args[0]))
}

// actionPrintf compiles printf(), system(), freopen() as a statement.
func (f *fn) actionPrintf(c *syntax.CallExpr, name string, act program.Action) {
	f.need(c, 1, -1)
	s, ok := stringConst(c.Args[0])
	if !ok {
		f.fail(c.Args[0], "%s( ) format must be a string constant", name)
	}
	fid := f.g.format(s)
	items := []program.Record{{Action: act, FormatID: fid, AggID: -1, NArgs: len(c.Args) - 1, Offset: f.recAlloc(0, 1)}}
	for _, a := range c.Args[1:] {
		if symAction(a) != program.ActNone {
			// usym() and friends keep their pid (for %A) and kind.
			items = append(items, f.storeSym(a, program.ActArg))
			continue
		}
		items = append(items, f.storeValue(a, program.ActArg))
	}
	for _, it := range items {
		f.recItem(it)
	}
}

// actionPrinta compiles printa() as a statement.
func (f *fn) actionPrinta(c *syntax.CallExpr, name string, act program.Action) {
	f.need(c, 1, -1)
	args := c.Args
	fid := -1
	if s, ok := stringConst(args[0]); ok {
		fid = f.g.format(s)
		args = args[1:]
	}
	items := []program.Record{{Action: act, FormatID: fid, AggID: -1, NArgs: len(args), Offset: f.recAlloc(0, 1)}}
	for _, a := range args {
		ag, ok := a.(*syntax.AggExpr)
		if !ok {
			f.fail(a, "printa( ) argument must be an aggregation")
		}
		ai := f.g.aggOf(f, ag)
		items = append(items, program.Record{Action: program.ActArg, FormatID: -1, AggID: ai.ID, Offset: f.recAlloc(0, 1)})
	}
	if len(items) > 1 {
		items[0].AggID = items[1].AggID
	}
	for _, it := range items {
		f.recItem(it)
	}
}

// actionAggOp compiles clear(), denormalize(), trunc(), normalize() as a statement.
func (f *fn) actionAggOp(c *syntax.CallExpr, name string, act program.Action) {
	f.need(c, 1, 2)
	ag, ok := c.Args[0].(*syntax.AggExpr)
	if !ok {
		f.fail(c.Args[0], "%s( ) argument must be an aggregation", name)
	}
	ai := f.g.aggOf(f, ag)
	items := []program.Record{{Action: act, FormatID: -1, AggID: ai.ID, NArgs: len(c.Args) - 1, Offset: f.recAlloc(0, 1)}}
	for _, a := range c.Args[1:] {
		r := f.expr(a)
		f.convert(r, f.typeOf(a), program.TypeLong)
		items = append(items, f.storeReg(r, program.TypeLong, program.ActArg))
	}
	for _, it := range items {
		f.recItem(it)
	}
}

// actionSetopt compiles setopt() as a statement.
func (f *fn) actionSetopt(c *syntax.CallExpr, name string, act program.Action) {
	f.need(c, 1, 2)
	s, ok := stringConst(c.Args[0])
	if !ok {
		f.fail(c.Args[0], "setopt( ) option must be a string constant")
	}
	items := []program.Record{{Action: act, FormatID: f.g.format(s), AggID: -1, NArgs: len(c.Args) - 1, Offset: f.recAlloc(0, 1)}}
	for _, a := range c.Args[1:] {
		items = append(items, f.storeValue(a, program.ActArg))
	}
	for _, it := range items {
		f.recItem(it)
	}
}

// actionExit compiles exit() as a statement. As in illumos, the first
// exit() of the run wins: the status and the DRAINING activity go into
// dt_state's first word together with one compare-and-exchange, and an
// exit() that finds the run already draining (a second one in the same
// firing, or one on another CPU) changes nothing; its record carries the
// status that won, so the consumer, which takes the last exit record it
// reads, ends with the first status. END's exit() sets the status anew:
// illumos honours an exit() in its COOLDOWN state, which only END sees.
func (f *fn) actionExit(c *syntax.CallExpr, name string, act program.Action) {
	r := f.onlyArg(c)
	f.convert(r, f.typeOf(c.Args[0]), program.TypeInt)
	st, w, old := f.alloc(), f.alloc(), f.alloc()
	f.emit(asm.LoadMapValue(st, 0, 0).WithReference(abi.MapState),
		asm.LoadMem(w, regScratch, int16(f.g.layout.MState)+abi.MStatePrid, asm.Word))
	end, lost, done := f.label("exend"), f.label("exlost"), f.label("exdone")
	f.emit(asm.JEq.Imm(w, abi.ProbeEnd, end),
		// old = activity | status<<32; only INACTIVE (BEGIN) and ACTIVE
		// may move to DRAINING.
		asm.LoadMem(old, st, abi.StateActivity, asm.DWord),
		asm.Mov.Reg(asm.R0, old),
		asm.Mov.Reg(w, old), asm.LSh.Imm(w, 32), asm.RSh.Imm(w, 32),
		asm.JGE.Imm(w, abi.ActivityDraining, lost),
		asm.Mov.Reg(w, r), asm.LSh.Imm(w, 32), asm.Or.Imm(w, abi.ActivityDraining),
		// CmpXchg leaves the word it found in R0.
		atomicMem(asm.CmpXchg, st, w, asm.DWord, abi.StateActivity),
		asm.JEq.Reg(asm.R0, old, done))
	f.mark(lost)
	// The word as it is now holds the winner's status (it may have
	// changed since old was read).
	f.emit(asm.LoadMem(r, st, abi.StateActivity, asm.DWord), asm.RSh.Imm(r, 32), asm.Ja.Label(done))
	f.mark(end)
	f.emit(asm.StoreMem(st, abi.StateExitStatus, r, asm.Word),
		storeImm(st, abi.StateActivity, abi.ActivityDraining, asm.Word))
	f.mark(done)
	f.free(st, w, old)
	f.recItem(f.storeReg(r, program.TypeInt, act))
}

// actionStack compiles stack(), ustack(), jstack() as a statement.
func (f *fn) actionStack(c *syntax.CallExpr, name string, act program.Action) {
	f.stack(c, name)
}

// actionTracemem compiles tracemem() as a statement.
func (f *fn) actionTracemem(c *syntax.CallExpr, name string, act program.Action) {
	f.need(c, 2, 3)
	n, ok := f.constant(c.Args[1])
	if !ok || n <= 0 || n > 65536 {
		f.fail(c.Args[1], "tracemem( ) size must be a positive constant")
	}
	t := f.typeOf(c.Args[0])
	r := f.expr(c.Args[0])
	off := f.recAlloc(uint32(n), 8)
	addr := f.alloc()
	f.emit(asm.Mov.Reg(addr, r))
	h := asm.FnProbeReadKernel
	if t.User {
		h = asm.FnProbeReadUser
	}
	f.call(h, scr(f.g.layout.Output+off), imm(n), reg(r))
	f.checkRead(addr)
	f.free(addr)
	// tracemem(addr, size, nbytes) shows nbytes of the size bytes read
	// (all of them when nbytes is negative or above size); the count,
	// known only at run time, follows as an argument.
	f.recItem(program.Record{Action: act, Offset: off, Size: uint32(n), Kind: program.KindBytes, FormatID: -1, AggID: -1, NArgs: len(c.Args) - 2})
	if len(c.Args) == 3 {
		r := f.expr(c.Args[2])
		f.convert(r, f.typeOf(c.Args[2]), program.TypeLong)
		f.recItem(f.storeReg(r, program.TypeLong, program.ActArg))
	}
}

// actionSpeculate compiles speculate() as a statement. Its record's size
// is known once the clause's last data action is compiled: a jump-by-zero
// stands where flush may send the clause to specTail instead.
//
// As in dtrace-utils (dt_speculation_speculate), a speculation that is not
// in use (0, above nspec, never returned by speculation() or already
// committed or discarded) ends the clause there: nothing of it is traced
// and the statements after speculate() do not run.
func (f *fn) actionSpeculate(c *syntax.CallExpr, name string, act program.Action) {
	r := f.onlyArg(c)
	f.emit(asm.Mov.Reg32(r, r))
	f.emit(asm.StoreMem(regScratch, int16(f.g.layout.MState)+abi.MStateSpecID, r, asm.DWord))
	f.emit(asm.JEq.Imm(r, 0, f.ret), asm.JGT.Imm(r, int32(f.g.opts.NSpec), f.ret))
	key := f.tmp(8)
	f.emit(asm.StoreMem(regScratch, int16(key), r, asm.Word))
	f.free(r)
	f.call(asm.FnMapLookupElem, mapOp(abi.MapSpec), scr(key))
	v := f.alloc()
	f.emit(asm.JEq.Imm(asm.R0, 0, f.ret), asm.LoadMem(v, asm.R0, 0, asm.DWord), asm.JEq.Imm(v, 0, f.ret))
	f.free(v)
	f.recItem(program.Record{Action: act, FormatID: -1, AggID: -1, Offset: f.recAlloc(0, 1)})
	sc := specCheck{at: f.pc(), rec: f.rec, cont: f.label("specgo")}
	f.emit(asm.Instruction{OpCode: asm.Ja.Op(asm.ImmSource)})
	f.mark(sc.cont)
	f.specChecks = append(f.specChecks, sc)
}

// specCheck is a speculate() whose clause may end there (actionSpeculate).
type specCheck struct {
	at   int                 // index of its jump-by-zero
	rec  *program.RecordSpec // the record it makes speculative
	cont string              // label after the jump
	tail string              // label of its specTail code, once needed
}

// checkSpecSize, as the record e is closed, sends the speculate() calls
// of a record larger than specsize to a tail that counts a speculative
// drop and ends the clause (when the speculation id is not 0).
func (f *fn) checkSpecSize(e *program.RecordSpec) {
	for _, sc := range f.specChecks {
		if sc.rec != e || f.g.opts.SpecSize <= 0 || int64(e.Size) <= f.g.opts.SpecSize {
			continue
		}
		sc.tail = f.label("spectoobig")
		// The jump keeps its metadata (a label, a source line).
		jump := f.insns[sc.at]
		jump.Offset = -1
		f.insns[sc.at] = jump.WithReference(sc.tail)
		f.specTails = append(f.specTails, sc)
	}
}

// specTail is the code the jumps checkSpecSize made go to, after the
// clause's return.
func (f *fn) specTail() {
	for _, sc := range f.specTails {
		f.mark(sc.tail)
		r := f.alloc()
		f.emit(asm.LoadMem(r, regScratch, int16(f.g.layout.MState)+abi.MStateSpecID, asm.DWord),
			asm.JEq.Imm(r, 0, sc.cont))
		f.free(r)
		f.bumpCounter(abi.CPUSpecDrops)
		f.emit(asm.Ja.Label(f.ret))
	}
}

// actionCommit compiles commit(), discard() as a statement.
func (f *fn) actionCommit(c *syntax.CallExpr, name string, act program.Action) {
	r := f.onlyArg(c)
	keepR := f.alloc()
	f.emit(asm.Mov.Reg(keepR, r))
	f.recItem(f.storeReg(r, program.TypeULong, act))
	f.specRelease(keepR)
}

// actionMark compiles raise(), panic(), breakpoint(), stop(), ftruncate(), printm() as a statement.
func (f *fn) actionMark(c *syntax.CallExpr, name string, act program.Action) {
	if act == program.ActRaise {
		// The signal goes to the firing process from the kernel, as
		// in dtrace on Linux (bpf_send_signal); the helper's errors
		// (a bad signal, a kernel thread) are ignored as there. The
		// record below only marks the firing for the consumer.
		r := f.expr(c.Args[0])
		f.call(asm.FnSendSignal, reg(r))
	}
	items := []program.Record{{Action: act, FormatID: -1, AggID: -1, NArgs: len(c.Args), Offset: f.recAlloc(0, 1)}}
	for _, a := range c.Args {
		items = append(items, f.storeValue(a, program.ActArg))
	}
	for _, it := range items {
		f.recItem(it)
	}
}

// storeSym stores the address a symbol subroutine call e returns as an
// item of the given action: 8 bytes for the kernel's, and for user
// addresses the tgid of the firing process first (16 bytes), so that the
// consumer resolves them in the process they belong to.
func (f *fn) storeSym(e syntax.Expr, action program.Action) program.Record {
	kind := symKind(e)
	size := uint32(8)
	if kind >= program.KindUSym {
		size = 16
	}
	off := f.recAlloc(size, 8)
	f.symInto(e, kind, regScratch, f.out(off))
	return program.Record{Action: action, Offset: off, Size: size, Kind: kind, FormatID: -1, AggID: -1}
}

// symInto writes the address e evaluates to at base+off, after the tgid
// of the firing process for the user kinds.
func (f *fn) symInto(e syntax.Expr, kind program.ValueKind, base asm.Register, off int16) {
	r := f.expr(e)
	if kind >= program.KindUSym {
		f.call(asm.FnGetCurrentPidTgid)
		f.emit(asm.RSh.Imm(asm.R0, 32), asm.StoreMem(base, off, asm.R0, asm.DWord))
		off += 8
	}
	f.emit(asm.StoreMem(base, off, r, asm.DWord))
	f.free(r)
}

// need checks the argument count (max -1: unbounded).
func (f *fn) need(c *syntax.CallExpr, min, max int) {
	if len(c.Args) < min || (max >= 0 && len(c.Args) > max) {
		f.fail(c, "wrong number of arguments")
	}
}

// onlyArg evaluates the argument of a call that takes exactly one.
func (f *fn) onlyArg(c *syntax.CallExpr) asm.Register {
	f.need(c, 1, 1)
	return f.expr(c.Args[0])
}

// stack stores a kernel or user stack (bpf_get_stack) of the requested
// depth.
func (f *fn) stack(c *syntax.CallExpr, name string) {
	depth := int64(20)
	if name != "stack" {
		depth = 100
	}
	if len(c.Args) > 0 {
		if v, ok := f.constant(c.Args[0]); ok && v > 0 {
			depth = v
		}
	}
	depth = f.g.maxFrames(depth)
	size := uint32(depth * 8)
	user := name != "stack"
	hdr := uint32(0)
	if user {
		hdr = 8 // the tgid the PCs belong to
	}
	off := f.recAlloc(hdr+size, 8)
	for i := uint32(0); i < hdr+size; i += 8 {
		f.emit(storeImm(regScratch, f.out(off+i), 0, asm.DWord))
	}
	flags := int64(0)
	act, kind := program.ActStack, program.KindStack
	if user {
		flags = 1 << 8 // BPF_F_USER_STACK
		act, kind = program.ActUStack, program.KindUStack
		f.call(asm.FnGetCurrentPidTgid)
		f.emit(asm.RSh.Imm(asm.R0, 32), asm.StoreMem(regScratch, f.out(off), asm.R0, asm.DWord))
	}
	skip := f.label("nostk")
	if !user {
		// BEGIN and END fire in the consumer: no kernel stack.
		p := f.alloc()
		f.emit(asm.LoadMem(p, regScratch, int16(f.g.layout.MState)+abi.MStatePrid, asm.Word), asm.JLE.Imm(p, abi.ProbeEnd, skip))
		f.free(p)
	}
	if user {
		f.free(f.ustackPCs(f.g.layout.Output+off+hdr, int64(size)))
	} else {
		f.call(asm.FnGetStack, ctxOp(), scr(f.g.layout.Output+off+hdr), imm(int64(size)), imm(flags))
	}
	f.mark(skip)
	f.recItem(program.Record{Action: act, Offset: off, Size: hdr + size, Kind: kind, FormatID: -1, AggID: -1})
}

// specRelease frees speculation slot id in dt_spec (commit/discard);
// the consumer acts on the record. An id above nspec (taken as the
// unsigned 32-bit id, so -1 is one) is an illegal operation, as in
// dtrace-utils' dt_speculation_set_drainable and illumos'
// dtrace_speculation_commit; 0 and a slot not in use are left alone.
func (f *fn) specRelease(id asm.Register) {
	bad := f.label("nospec")
	ok := f.label("specok")
	f.emit(asm.Mov.Reg32(id, id), asm.JLE.Imm(id, int32(f.g.opts.NSpec), ok))
	f.fault(abi.FltIllOp, 0, false)
	f.mark(ok)
	f.emit(asm.JEq.Imm(id, 0, bad))
	key := f.tmp(8)
	f.emit(asm.StoreMem(regScratch, int16(key), id, asm.Word))
	f.free(id)
	f.call(asm.FnMapLookupElem, mapOp(abi.MapSpec), scr(key))
	f.emit(asm.JEq.Imm(asm.R0, 0, bad), storeImm(asm.R0, 0, 0, asm.DWord))
	f.mark(bad)
	f.free(id)
}

// speculation allocates a free slot of dt_spec (1..nspec), or returns 0
// and counts "unavailable".
func (f *fn) speculation() asm.Register {
	d := f.alloc()
	done := f.label("specdone")
	key := f.tmp(8)
	for i := 1; i <= int(f.g.opts.NSpec) && i <= 16; i++ {
		next := f.label("specnext")
		f.emit(storeImm(regScratch, int16(key), int64(i), asm.Word))
		f.call(asm.FnMapLookupElem, mapOp(abi.MapSpec), scr(key))
		f.emit(asm.JEq.Imm(asm.R0, 0, next),
			asm.Mov.Imm(d, 1),
			atomicMem(asm.FetchOr, asm.R0, d, asm.DWord, 0),
			asm.JNE.Imm(d, 0, next),
			asm.Mov.Imm(d, int32(i)),
			asm.Ja.Label(done))
		f.mark(next)
	}
	f.emit(asm.Mov.Imm(d, 0))
	f.bumpCounter(abi.CPUSpecUnavail)
	f.mark(done)
	return d
}
