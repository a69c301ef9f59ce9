package codegen

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// codegen's own slots in mstate (past abi.MStatePrivate, relative to
// Layout.MState); the shared ones are in internal/abi.
const (
	msErrSave = 128 // u64 saved prid + arg0..arg5 + epid while dt_error runs
	msBase    = 192 // u64 address of this scratch area (stored as a number)
	msLaunder = 200 // u64 slot that turns a pointer into a plain number
	msStrtok  = 208 // u64 strtok() position in the tok buffer + 1 (0: none)
	msFaultPC = 216 // u64 pc of the fault
	msCPUInfo = 224 // cpuinfo_t (16 bytes) curcpu points to
	// 240, 248: alloca() span (alloca.go); 256: abi.MStateUCaller.
	msTraceOff = 264 // u64 nonzero once this clause's traceoff() closed the gate
)

// Fixed scratch areas before the record buffer.
const (
	faultRecOff = 320 // the fault record is built here (abi.FaultRec*)
	// OutputOffset is where records are assembled (Layout.Output).
	OutputOffset = 512
)

// maxScratch bounds the scratch layout: offsets from R7 are 16-bit.
const maxScratch = 32760

// gen is the state of one Generate call.
type gen struct {
	// scanned marks translator member expressions scanVars has visited.
	scanned map[syntax.Expr]bool
	info    Info
	opts    Options
	layout  program.ScratchLayout
	spec    *program.Spec
	maps    map[string]bool

	gvars    map[int]uint32 // global var id -> offset in dt_gvars
	gvarEnd  uint32
	thisVars map[int]uint32 // clause-local id -> scratch offset
	thisEnd  uint32
	// fvars are the offsets of the flow variables after abi.FlowVars
	// in a dt_flow value (flow.go); flowIDOff is where dt_gvars holds
	// the counter new flow ids come from.
	fvars     map[int]uint32
	fvarEnd   uint32
	flowIDOff uint32

	tvarSize   uint32 // dt_tvars value size
	assocKey   uint32 // dt_assoc key size
	assocValue uint32 // dt_assoc value size

	aggValueMax uint32 // largest aggregation value (dt_zero's size)
	// aggIndirect is set when the program has more aggregations than
	// aggsDirect: each is then reached through the array of maps of
	// its key and value size (aggVia), so that no program names more
	// maps than the kernel allows, and none has a front cache.
	aggIndirect bool
	aggVia      map[int]aggSlot
	aggArrays   []*aggArray // those arrays, in the order made
	// keyWidths are the narrowed widths of string key items, by
	// aggregation id and position (keywidth.go).
	keyWidths map[int][]uint32
	// aggKeyTypes are the key item types of each aggregation, by id, as
	// aggOf laid them out (after narrowing and stack/symbol marking).
	aggKeyTypes map[int][]*program.Type
	zeroSize    uint32 // other values created from dt_zero

	// countSites numbers the snapshot(n) and traceoff(n) calls, each with
	// a u64 count in dt_snapshot.
	countSites map[*syntax.CallExpr]int

	// uwk holds the kernel offsets of the user-stack unwinder, once
	// asked for (unwind.go).
	uwk *uwKernel
	// uwOutEnd is the end of the furthest PC array an unwinder call
	// site writes (0: no site).
	uwOutEnd uint32

	// gated is set when the program calls traceoff() or traceon():
	// records pass the recording gate (traceoff.go).
	gated bool
	// speculates is set when the program calls speculate(): records
	// take the speculation id from mstate, 0 otherwise.
	speculates bool

	tempMax uint32 // highest scratch offset used by temporaries
	recMax  uint32 // largest record
	// allocaMax is the most alloca() memory a clause takes; allocaSlack
	// is set when a copy of run-time size into it needs the arena's size
	// again after it (see bcopy).
	allocaMax   uint32
	allocaSlack bool

	// strA and strB are fixed scratch buffers for string comparisons.
	strA, strB uint32
	// tok holds the string strtok() is taking apart (strBuf bytes) and
	// its 32-byte delimiter map; it survives across clauses.
	tok uint32

	errorClauses []string
	errorEPIDs   []uint32
	// stmts holds dtrace's statement number of each clause
	// (program.Spec.Stmt): fault records and the ERROR probe's arg2
	// carry it.
	stmts   []int
	srcText func(syntax.Pos) string
}

// strBuf is the storage size of one string: strsize bytes and a NUL.
// The byte after the NUL (nullFlag) marks a string variable holding NULL.
func (g *gen) strBuf() uint32 { return align8(g.opts.StrSize + 2) }

// nullFlag is the offset, in a string variable's storage, of the byte
// that is 1 when the variable holds NULL rather than a string.
func (g *gen) nullFlag() int16 { return int16(g.opts.StrSize + 1) }

func align8(n uint32) uint32 { return (n + 7) &^ 7 }

func (g *gen) useMap(name string) { g.maps[name] = true }

// Clause is one probe clause to compile.
type Clause struct {
	Decl *syntax.ProbeClause
	// Probes are the descriptions after macro expansion.
	Probes []string
}

// GenerateProgram compiles the clauses of prog, resolved by info, into a
// Spec. Generate (in check.go) adapts the checker's results to Info.
func GenerateProgram(prog *syntax.Program, info Info, opts Options) (spec *program.Spec, err error) {
	var cl []Clause
	for _, d := range prog.Decls {
		if c, ok := d.(*syntax.ProbeClause); ok {
			var probes []string
			for _, pd := range c.Descs {
				probes = append(probes, pd.Text)
			}
			cl = append(cl, Clause{Decl: c, Probes: probes})
		}
	}
	return GenerateClauses(cl, info, opts)
}

// GenerateClauses compiles clauses, resolved by info, into a Spec.
func GenerateClauses(prog []Clause, info Info, opts Options) (spec *program.Spec, err error) {
	opts.defaults()
	// Pass 1 measures records and temporaries with a provisional layout;
	// pass 2 generates with the final offsets.
	const provTemps, provAlloca = OutputOffset + 1<<20, 1 << 19
	g, err := generate(prog, info, opts, program.ScratchLayout{MState: 0, Output: OutputOffset, Temps: provTemps, Size: OutputOffset + 2<<20, Alloca: provAlloca})
	if err != nil {
		return nil, err
	}
	temps := OutputOffset + align8(g.recMax)
	// Pass 2 lays out exactly as pass 1 measured, with an alloca() arena
	// of the size the clauses need; the size is needed for the bounds
	// checks of stores through alloca() pointers.
	arena := align8(g.allocaMax)
	size := max(align8(g.tempMax-provTemps-provAlloca+arena+temps), temps)
	if g.allocaSlack {
		size = max(size, g.allocaStart()-provTemps+temps+2*arena)
	}
	final := program.ScratchLayout{MState: 0, Output: OutputOffset, Temps: temps, Size: size, Alloca: arena}
	g2, err := generate(prog, info, opts, final)
	if err != nil {
		return nil, err
	}
	g2.spec.Layout.Size = max(align8(g2.tempMax), temps, size)
	if g2.spec.Layout.Size > maxScratch {
		return nil, fmt.Errorf("program needs %d bytes of scratch space, more than the %d that generated code can address", g2.spec.Layout.Size, maxScratch)
	}
	finishLayout(g2.spec)
	return g2.spec, nil
}

// Error is a code generation error at a D source position: a construct
// the generator does not support yet, or a program too large for the
// register pool or the scratch area.
type Error struct {
	Pos syntax.Pos
	Err error
	// Tag is dtrace's tag for the error (D_ASRELO), or "".
	Tag string
}

// Error returns the message without the position (callers render it).
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// bailout is the panic value that unwinds the compilation of a clause
// after an error (fn.bail); clause recovers it and nothing else.
type bailout struct{ err error }

// bail stops compiling the clause with err.
func (f *fn) bail(err error) { panic(bailout{err}) }

func generate(clauses []Clause, info Info, opts Options, layout program.ScratchLayout) (g *gen, err error) {
	g = &gen{
		scanned:     map[syntax.Expr]bool{},
		info:        info,
		opts:        opts,
		layout:      layout,
		spec:        &program.Spec{Layout: layout},
		aggKeyTypes: map[int][]*program.Type{},
		maps:        map[string]bool{},
		gvars:       map[int]uint32{},
		thisVars:    map[int]uint32{},
		fvars:       map[int]uint32{},
		tempMax:     layout.Temps,
		srcText:     func(p syntax.Pos) string { return fmt.Sprintf("pos %d", p) },
	}
	if opts.SourceText != nil {
		g.srcText = opts.SourceText
	}
	g.tvarSize = 8
	g.assocKey = abi.AssocKeyTuple + 8
	g.assocValue = 8
	g.scanVars(clauses)
	g.scanKeyWidths(clauses)
	g.aggIndirect = countAggs(clauses) > aggsDirect
	// Clause-locals of 1, 2 or 4 bytes may leave the end unaligned; the
	// string buffers and temporaries after them take 8-byte stores.
	g.strA = layout.Temps + align8(g.thisEnd)
	g.strB = g.strA + g.strBuf()
	g.tok = g.strB + g.strBuf()
	g.tempMax = max(g.tempMax, g.allocaStart()+layout.Alloca)
	for _, c := range clauses {
		g.gated = g.gated || callsTo(c.Decl, "traceoff") || callsTo(c.Decl, "traceon")
		g.speculates = g.speculates || callsTo(c.Decl, "speculate")
	}
	g.stmts = program.Stmts(len(clauses), func(i int) int { return len(clauses[i].Probes) })
	for i, c := range clauses {
		if isErrorClause(c) {
			g.errorClauses = append(g.errorClauses, errorCopySym(i))
			g.errorEPIDs = append(g.errorEPIDs, uint32(i+1))
		}
	}
	for i, c := range clauses {
		cs, err := g.clause(i, c, clauseSym(i))
		if err != nil {
			return nil, err
		}
		g.spec.Clauses = append(g.spec.Clauses, cs)
	}
	if len(g.errorClauses) > 0 {
		g.spec.Funcs = append(g.spec.Funcs, g.errorFunc())
		// dt_error runs private copies of the ERROR clauses, so that a
		// program reaching dt_error needs nothing but Spec.Funcs.
		for i, c := range clauses {
			if isErrorClause(c) {
				cs, err := g.clause(i, c, errorCopySym(i))
				if err != nil {
					return nil, err
				}
				g.spec.Funcs = append(g.spec.Funcs, cs.Insns)
			}
		}
	}
	if g.uwOutEnd > 0 {
		// After every call site: the step's bound on where it writes
		// PCs is the end of the furthest site's array.
		g.spec.Funcs = append(g.spec.Funcs, g.uwStep(), g.uwVMA())
	}

	g.declareMaps()
	g.spec.GVarsSize = g.gvarEnd
	g.spec.GlobalOffsets, g.spec.LocalOffsets = g.gvars, map[int]uint32{}
	for id, off := range g.thisVars {
		g.spec.LocalOffsets[id] = off - layout.Temps
	}
	return g, nil
}

// allocaStart is the scratch offset of the alloca() arena (layout.Alloca
// bytes); each clause's other temporaries follow it.
func (g *gen) allocaStart() uint32 { return g.tok + g.strBuf() + 32 }

func clauseSym(i int) string { return fmt.Sprintf("dt_clause_%d", i) }

// errorCopySym names dt_error's copy of ERROR clause i.
func errorCopySym(i int) string { return fmt.Sprintf("dt_error_clause_%d", i) }

func isErrorClause(c Clause) bool {
	for _, d := range c.Probes {
		switch d {
		case "ERROR", "dtrace:::ERROR", ":::ERROR", "::ERROR":
			return true
		}
	}
	return false
}

// clause compiles one clause into a function.
func (g *gen) clause(i int, cl Clause, sym string) (cs *program.ClauseSpec, err error) {
	c := cl.Decl
	f := newFn(g, sym)
	f.clause = i
	f.isError = isErrorClause(cl)
	f.allocaNext = g.allocaStart()
	f.tempBase = f.allocaNext + g.layout.Alloca
	f.temp = f.tempBase
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				// Not ours: a bug, which must crash loudly.
				panic(r)
			}
			e := b.err
			var pe *Error
			if !errors.As(e, &pe) {
				e = &Error{Pos: f.pos, Err: e}
			}
			cs, err = nil, e
		}
	}()
	f.pos = c.Pos()
	f.pend = sym
	f.emit(asm.Mov.Reg(regCtx, asm.R1), asm.Mov.Reg(regScratch, asm.R2))
	if g.speculates {
		// A speculate() in the clause whose fault runs this ERROR
		// clause must not leak into its records (the dispatcher
		// clears it before each clause it calls).
		f.emit(storeImm(regScratch, int16(g.layout.MState)+abi.MStateSpecID, 0, asm.DWord))
	}
	// The scratch address as a number, to check pointers into it.
	base := optStore{at: f.pc(), n: 1, slots: []int16{msBase}}
	f.emit(asm.StoreMem(regScratch, int16(g.layout.MState)+msBase, regScratch, asm.DWord))
	if f.traceoff = callsTo(c, "traceoff"); f.traceoff {
		f.emit(storeImm(regScratch, int16(g.layout.MState)+msTraceOff, 0, asm.DWord))
	}
	alloca := optStore{at: f.pc(), n: 2, slots: []int16{msAllocaLo, msAllocaHi}}
	f.allocaReset()
	f.ret = f.label("ret")
	if c.Pred != nil {
		f.pos = c.Pred.Pos()
		r := f.cond(c.Pred)
		f.emit(asm.JEq.Imm(r, 0, f.ret))
		f.free(r)
	}
	if c.Body != nil && len(c.Body.List) > 0 {
		f.block(c.Body.List)
	} else {
		f.defaultAction()
	}
	f.flush()
	f.mark(f.ret)
	f.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	f.specTail()
	if f.faultLabel != "" {
		f.faultTail()
	}
	f.compact(base, alloca)
	cs = &program.ClauseSpec{Index: i, Symbol: sym, Insns: f.insns, EPID: uint32(i + 1), Segments: f.segs, IsError: f.isError, ReadsArgs: f.readsArgs}
	cs.Probes = cl.Probes
	if len(f.segs) > 0 {
		cs.Records, cs.RecordSize = f.segs[0].Records, f.segs[0].Size
	}
	return cs, nil
}

// faultTail emits the shared fault code of a clause: the fault record,
// the ERROR clauses, and the return.
func (f *fn) faultTail() {
	g := f.g
	ms := int16(g.layout.MState)
	f.mark(f.faultLabel)
	f.used = map[asm.Register]bool{}
	r := asm.R1
	f.emit(
		storeImm(regScratch, faultRecOff+abi.FaultRecEPID, int64(abi.EPIDFault)-1<<32, asm.Word),
		storeImm(regScratch, faultRecOff+abi.FaultRecEPID+4, 0, asm.Word),
		storeImm(regScratch, faultRecOff+abi.FaultRecClause, int64(g.stmts[f.clause]), asm.Word),
		asm.LoadMem(r, regScratch, ms+abi.MStatePrid, asm.Word),
		asm.StoreMem(regScratch, faultRecOff+abi.FaultRecProbe, r, asm.Word),
		asm.LoadMem(r, regScratch, ms+abi.MStateFault, asm.DWord),
		asm.StoreMem(regScratch, faultRecOff+abi.FaultRecCode, r, asm.DWord),
		asm.LoadMem(r, regScratch, ms+abi.MStateIllval, asm.DWord),
		asm.StoreMem(regScratch, faultRecOff+abi.FaultRecIllval, r, asm.DWord),
		asm.LoadMem(r, regScratch, ms+msFaultPC, asm.DWord),
		asm.StoreMem(regScratch, faultRecOff+abi.FaultRecPC, r, asm.DWord),
		asm.LoadMem(r, regScratch, ms+abi.MStateEPID, asm.Word),
		asm.StoreMem(regScratch, faultRecOff+abi.FaultRecClauseEPID, r, asm.Word),
		storeImm(regScratch, faultRecOff+abi.FaultRecClauseEPID+4, 0, asm.Word),
		storeImm(regScratch, faultRecOff+abi.FaultRecClauseEPID+8, 0, asm.DWord),
	)
	f.call(asm.FnPerfEventOutput, ctxOp(), mapOp(abi.MapBuf), imm(0xffffffff), scr(faultRecOff), imm(abi.FaultRecordSize))
	f.bumpCounter(abi.CPUErrors)
	if !f.isError && len(g.errorClauses) > 0 {
		f.callFunc("dt_error", ctxOp(), operand{kind: opScratch})
	}
	f.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
}

// errorFunc builds dt_error(ctx, scratch): it saves the probe id and the
// first six arguments, sets the ERROR probe's arguments (arg1 probe id of
// the faulting probe, arg2 the clause's statement number, arg3 pc, arg4
// fault code, arg5 illval, as the corpus expects), runs the ERROR clauses and restores
// the saved state.
func (g *gen) errorFunc() asm.Instructions {
	f := newFn(g, "dt_error")
	ms := int16(g.layout.MState)
	f.emit(asm.Mov.Reg(regCtx, asm.R1).WithSymbol("dt_error").WithSource(asm.Comment("dt_error: run the ERROR clauses")))
	f.emit(asm.Mov.Reg(regScratch, asm.R2))
	r := asm.R1
	f.emit(asm.LoadMem(r, regScratch, ms+abi.MStatePrid, asm.Word), asm.StoreMem(regScratch, ms+msErrSave, r, asm.DWord))
	f.emit(asm.LoadMem(r, regScratch, ms+abi.MStateEPID, asm.Word), asm.StoreMem(regScratch, ms+msErrSave+56, r, asm.DWord))
	for i := int16(0); i < 6; i++ {
		f.emit(asm.LoadMem(r, regScratch, ms+abi.MStateArgs+8*i, asm.DWord),
			asm.StoreMem(regScratch, ms+msErrSave+8+8*i, r, asm.DWord))
	}
	f.emit(
		storeImm(regScratch, ms+abi.MStateArgs, 0, asm.DWord),
		asm.LoadMem(r, regScratch, ms+abi.MStatePrid, asm.Word),
		asm.StoreMem(regScratch, ms+abi.MStateArgs+8, r, asm.DWord),
		asm.LoadMem(r, regScratch, faultRecOff+abi.FaultRecClause, asm.Word),
		asm.StoreMem(regScratch, ms+abi.MStateArgs+16, r, asm.DWord),
		asm.LoadMem(r, regScratch, ms+msFaultPC, asm.DWord),
		asm.StoreMem(regScratch, ms+abi.MStateArgs+24, r, asm.DWord),
		asm.LoadMem(r, regScratch, ms+abi.MStateFault, asm.DWord),
		asm.StoreMem(regScratch, ms+abi.MStateArgs+32, r, asm.DWord),
		asm.LoadMem(r, regScratch, ms+abi.MStateIllval, asm.DWord),
		asm.StoreMem(regScratch, ms+abi.MStateArgs+40, r, asm.DWord),
		storeImm(regScratch, ms+abi.MStatePrid, abi.ProbeError, asm.Word),
	)
	for i, sym := range g.errorClauses {
		f.emit(storeImm(regScratch, ms+abi.MStateEPID, int64(g.errorEPIDs[i]), asm.Word),
			asm.Mov.Reg(asm.R1, regCtx), asm.Mov.Reg(asm.R2, regScratch), asm.Call.Label(sym))
	}
	f.emit(asm.LoadMem(r, regScratch, ms+msErrSave, asm.DWord), asm.StoreMem(regScratch, ms+abi.MStatePrid, r, asm.Word))
	f.emit(asm.LoadMem(r, regScratch, ms+msErrSave+56, asm.DWord), asm.StoreMem(regScratch, ms+abi.MStateEPID, r, asm.Word))
	for i := int16(0); i < 6; i++ {
		f.emit(asm.LoadMem(r, regScratch, ms+msErrSave+8+8*i, asm.DWord),
			asm.StoreMem(regScratch, ms+abi.MStateArgs+8*i, r, asm.DWord))
	}
	f.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	return f.insns
}

// bumpCounter adds one to a u64 counter in dt_cpustate.
func (f *fn) bumpCounter(off int16) {
	f.emit(storeImm(asm.R10, stackMisc, 0, asm.DWord))
	f.call(asm.FnMapLookupElem, mapOp(abi.MapCPUState), operand{kind: opStack, imm: stackMisc})
	skip := f.label("nocpu")
	r := f.alloc()
	f.emit(asm.JEq.Imm(asm.R0, 0, skip),
		asm.LoadMem(r, asm.R0, off, asm.DWord),
		asm.Add.Imm(r, 1),
		asm.StoreMem(asm.R0, off, r, asm.DWord))
	f.free(r)
	f.mark(skip)
}

// declareMaps fills Spec.Maps in a fixed order. The maps of global,
// thread-local and associative variables and of speculations are
// declared only when the generated code names them: a program that uses
// none of them creates no such map (the dynamic variable hashes are
// preallocated, thousands of entries each), so it starts sooner.
func (g *gen) declareMaps() {
	s := g.spec
	named := g.namedMaps()
	s.Maps = append(s.Maps,
		program.MapSpec{Name: abi.MapBuf, Kind: program.MapPerfEventArray, KeySize: 4, ValueSize: 4},
		program.MapSpec{Name: abi.MapScratch, Kind: program.MapArray, KeySize: 4, ValueSize: 0}, // size set below
		program.MapSpec{Name: abi.MapState, Kind: program.MapArray, KeySize: 4, ValueSize: abi.StateSize, MaxEntries: 1},
		program.MapSpec{Name: abi.MapCPUState, Kind: program.MapPerCPUArray, KeySize: 4, ValueSize: abi.CPUStateSize, MaxEntries: 1},
	)
	for _, m := range []program.MapSpec{
		{Name: abi.MapGVars, Kind: program.MapArray, KeySize: 4, ValueSize: max(8, align8(g.gvarEnd)), MaxEntries: 1},
		{Name: abi.MapTVars, Kind: program.MapHash, KeySize: abi.TVarKeySize, ValueSize: g.tvarSize, MaxEntries: g.opts.DynVars},
		{Name: abi.MapAssoc, Kind: program.MapHash, KeySize: g.assocKey, ValueSize: g.assocValue, MaxEntries: g.opts.DynVars},
		{Name: abi.MapSpec, Kind: program.MapArray, KeySize: 4, ValueSize: abi.SpecStateSize, MaxEntries: g.opts.NSpec + 1},
	} {
		if named[m.Name] {
			s.Maps = append(s.Maps, m)
		}
	}
	if n := len(g.countSites); n > 0 {
		s.Maps = append(s.Maps, program.MapSpec{Name: abi.MapSnapshot, Kind: program.MapArray, KeySize: 4, ValueSize: uint32(8 * n), MaxEntries: 1})
	}
	if g.maps[abi.MapZero] {
		s.Maps = append(s.Maps, program.MapSpec{Name: abi.MapZero, Kind: program.MapArray, KeySize: 4, ValueSize: max(8, g.aggValueMax, g.zeroSize), MaxEntries: 1})
	}
	if g.maps[abi.MapFlow] || g.maps[abi.MapFlowData] || g.maps[abi.MapFlowPos] || g.maps[abi.MapFlowTag] || g.maps[abi.MapFlowBio] {
		// Flow variables (flow.go), sized by flowsize; full tables
		// let their oldest entries go, which the consumer counts.
		n := g.opts.FlowSize
		s.Maps = append(s.Maps,
			program.MapSpec{Name: abi.MapFlow, Kind: program.MapLRUHash, KeySize: 8, ValueSize: g.flowSize(), MaxEntries: n},
			program.MapSpec{Name: abi.MapFlowData, Kind: program.MapLRUHash, KeySize: abi.FlowDataKeySize, ValueSize: g.flowSize(), MaxEntries: n},
			program.MapSpec{Name: abi.MapFlowPos, Kind: program.MapLRUHash, KeySize: 8, ValueSize: abi.FlowPosSize, MaxEntries: n},
			program.MapSpec{Name: abi.MapFlowTag, Kind: program.MapLRUHash, KeySize: 8, ValueSize: 8, MaxEntries: n},
			program.MapSpec{Name: abi.MapFlowBio, Kind: program.MapLRUHash, KeySize: 8, ValueSize: g.flowSize(), MaxEntries: n})
	}
	if g.maps[abi.MapUWFiles] {
		// The user-stack unwinder's tables (unwind.go), filled by the
		// library.
		s.Maps = append(s.Maps,
			program.MapSpec{Name: abi.MapUWFiles, Kind: program.MapHash, KeySize: abi.UWFileKeySize, ValueSize: abi.UWFileSize, MaxEntries: abi.UWFilesMax},
			program.MapSpec{Name: abi.MapUWTables, Kind: program.MapArrayOfMaps, KeySize: 4, ValueSize: 4, MaxEntries: abi.UWTablesMax, InnerValueSize: abi.UWRowSize},
			program.MapSpec{Name: abi.MapUWMiss, Kind: program.MapHash, KeySize: abi.UWFileKeySize, ValueSize: abi.UWMissSize, MaxEntries: abi.UWMissMax},
			program.MapSpec{Name: abi.MapUWVMAs, Kind: program.MapPerCPUArray, KeySize: 4, ValueSize: abi.UWVMAsSize, MaxEntries: 1})
	}
	if g.maps[abi.MapProbes] {
		// An array indexed by probe id (the verifier inlines its
		// lookups); the library sizes it to the largest enabled id.
		s.Maps = append(s.Maps, program.MapSpec{Name: abi.MapProbes, Kind: program.MapArray, KeySize: 4, ValueSize: 4 * abi.ProbeNameSize, MaxEntries: 4096})
	}
	for _, a := range g.spec.Aggs {
		if a != nil {
			s.Maps = append(s.Maps, program.MapSpec{Name: a.Map, Kind: program.MapPerCPUHash, KeySize: a.KeySize, ValueSize: a.ValueSize, MaxEntries: g.opts.AggEntries})
			if a.Cache != "" {
				s.Maps = append(s.Maps, program.MapSpec{Name: a.Cache, Kind: program.MapPerCPUArray, KeySize: 4, ValueSize: a.CacheValueOff() + a.ValueSize, MaxEntries: a.CacheSlots})
			}
		}
	}
	// The arrays of aggregation hashes come after the hashes they hold.
	for _, aa := range g.aggArrays {
		s.Maps = append(s.Maps, program.MapSpec{Name: aa.name, Kind: program.MapArrayOfMaps, KeySize: 4, ValueSize: 4, MaxEntries: uint32(len(aa.inner)),
			Inner: aa.inner, InnerKind: program.MapPerCPUHash, InnerKeySize: aa.keySize, InnerValueSize: aa.valueSize})
	}
}

// namedMaps returns the maps the generated instructions name.
func (g *gen) namedMaps() map[string]bool {
	named := map[string]bool{}
	add := func(insns asm.Instructions) {
		for _, ins := range insns {
			if ins.IsLoadFromMap() || ins.IsConstantLoad(asm.DWord) {
				if ref := ins.Reference(); ref != "" {
					named[ref] = true
				}
			}
		}
	}
	for _, c := range g.spec.Clauses {
		add(c.Insns)
	}
	for _, f := range g.spec.Funcs {
		add(f)
	}
	return named
}

// finishLayout sets dt_scratch's value size once the layout is final.
func finishLayout(s *program.Spec) {
	for i := range s.Maps {
		if s.Maps[i].Name == abi.MapScratch {
			s.Maps[i].ValueSize = s.Layout.Size
		}
	}
}
