package codegen

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// This file holds the instruction emitter of one BPF function: labels,
// source positions, the register pool with spilling around helper calls,
// and the fault paths.
//
// Register convention inside generated functions:
//
//	R6  program context (saved from R1 at entry)
//	R7  this CPU's scratch area (saved from R2 at entry)
//	R8, R9, R1..R5  expression temporaries (the pool below)
//	R0  helper results; never held across instructions by the pool
//	R10 frame pointer: register spill slots, helper argument staging
const (
	regCtx     = asm.R6
	regScratch = asm.R7
)

// pool lists the temporaries in allocation order: callee-saved first, so
// that fewer values need spilling around helper calls.
var pool = []asm.Register{asm.R8, asm.R9, asm.R1, asm.R2, asm.R3, asm.R4, asm.R5}

// Stack frame layout (offsets from R10).
const (
	// spillSlot(r) is where a caller-saved register is kept across a call.
	stackSpillBase = -8 // R0 at -8, R1 at -16, ..., R9 at -80
	// stackArgBase stages helper arguments: argument i at -88-8*i.
	stackArgBase = -88
	// stackMisc is free for short sequences (e.g. a key on the stack).
	stackMisc = -136
	// stackStash is the first of maxStash slots where values wait while
	// a sibling subexpression is evaluated (see hold).
	stackStash = -168
	maxStash   = 8
)

func spillSlot(r asm.Register) int16 { return int16(stackSpillBase - 8*int(r)) }
func argSlot(i int) int16            { return int16(stackArgBase - 8*i) }

// srcLine is attached to instructions with WithSource.
type srcLine struct {
	pos  syntax.Pos
	text string
}

func (s srcLine) String() string { return s.text }

// fn builds one BPF function.
type fn struct {
	g      *gen
	sym    string
	insns  asm.Instructions
	pend   string // label for the next instruction
	nlabel int
	used   map[asm.Register]bool
	pos    syntax.Pos
	last   syntax.Pos // position of the last annotated instruction
	// traceoff is set in a clause that calls traceoff(): its flushes
	// check msTraceOff.
	traceoff bool
	// faultLabel is the clause's shared fault tail, "" before first use.
	faultLabel string

	clause    int    // clause index
	isError   bool   // an ERROR clause: faults do not call dt_error
	readsArgs bool   // the clause loads arg0-arg9 or args[] (ClauseSpec.ReadsArgs)
	ret       string // label of the clause's normal return

	// Temporaries in scratch: a bump allocator from tempBase, reset after
	// each statement.
	tempBase, temp uint32
	// allocaNext is where the next alloca() memory of the clause starts.
	allocaNext uint32

	// The record being assembled (nil when none is open).
	rec  *program.RecordSpec
	segs []*program.RecordSpec
	// specChecks are the speculate() calls whose record is still open:
	// each leaves a jump-by-zero that flush turns into a jump to the
	// clause's end when the record outgrows specsize.
	specChecks []specCheck
	// specTails are the code after the clause's return that such jumps
	// go to.
	specTails []specCheck
	// pendingMark is a label made by pendLabel for markPending.
	pendingMark string
	// stashed counts the stack slots in use by hold.
	stashed int
	// binds maps translator parameters to their inputs (xlate.go).
	binds map[*Var]binding
}

func newFn(g *gen, sym string) *fn {
	return &fn{g: g, sym: sym, used: map[asm.Register]bool{}}
}

// label returns a fresh label name unique in the program.
func (f *fn) label(hint string) string {
	f.nlabel++
	return fmt.Sprintf("%s.%s%d", f.sym, hint, f.nlabel)
}

// emit appends instructions, attaching a pending label and the current
// source position.
func (f *fn) emit(insns ...asm.Instruction) {
	for _, ins := range insns {
		if f.pend != "" {
			ins = ins.WithSymbol(f.pend)
			f.pend = ""
		}
		if f.pos != f.last && f.pos.IsValid() {
			ins = ins.WithSource(srcLine{f.pos, f.g.srcText(f.pos)})
			f.last = f.pos
		}
		f.insns = append(f.insns, ins)
	}
}

// mark places label l on the next instruction.
func (f *fn) mark(l string) {
	if f.pend != "" {
		// Two labels on one spot: a jump-by-zero keeps both addressable.
		f.emit(asm.Instruction{OpCode: asm.Ja.Op(asm.ImmSource)})
	}
	f.pend = l
}

// pc is the index the next instruction will have.
func (f *fn) pc() int { return len(f.insns) }

// alloc takes a temporary register from the pool.
func (f *fn) alloc() asm.Register {
	for _, r := range pool {
		if !f.used[r] {
			f.used[r] = true
			return r
		}
	}
	panic(bailout{errTooComplex})
}

// free returns a temporary to the pool.
func (f *fn) free(rs ...asm.Register) {
	for _, r := range rs {
		delete(f.used, r)
	}
}

// held is a value kept either in a register or in a stack slot.
type held struct {
	reg  asm.Register
	slot int // -1: in reg
}

// hold keeps r while the sibling subexpression next is compiled: unless
// next is a leaf (a constant or a variable), r waits in a stack slot so
// that deep expressions do not run out of temporaries.
func (f *fn) hold(r asm.Register, next syntax.Expr) held {
	if isLeaf(next) || f.stashed >= maxStash {
		return held{reg: r, slot: -1}
	}
	k := f.stashed
	f.stashed++
	f.emit(asm.StoreMem(asm.R10, int16(stackStash-8*k), r, asm.DWord))
	f.free(r)
	return held{slot: k}
}

// isLeaf reports expressions that need at most one temporary.
func isLeaf(e syntax.Expr) bool {
	switch e := e.(type) {
	case *syntax.ParenExpr:
		return isLeaf(e.X)
	case *syntax.IntLit, *syntax.StringLit, *syntax.Ident, *syntax.ScopedVar, *syntax.MacroVar:
		return true
	}
	return false
}

// release returns a held value in a register.
func (f *fn) release(h held) asm.Register {
	if h.slot < 0 {
		return h.reg
	}
	f.stashed--
	r := f.alloc()
	f.emit(asm.LoadMem(r, asm.R10, int16(stackStash-8*h.slot), asm.DWord))
	return r
}

// errTooComplex stops the clause (fn.bail) when an
// expression needs more temporaries than the pool has.
var errTooComplex = fmt.Errorf("expression too complex for the register pool")

// operand is a helper argument.
type operand struct {
	kind opKind
	reg  asm.Register
	imm  int64
	name string // map name
}

type opKind int

const (
	opReg     opKind = iota // a pool register (freed by call)
	opImm                   // a constant
	opScratch               // R7 + imm: a pointer into scratch
	opStack                 // R10 + imm
	opMap                   // a map pointer by name
	opCtx                   // the program context
	opKeep                  // a pool register, not freed
	opFunc                  // a pointer to the BPF function named name
)

func reg(r asm.Register) operand  { return operand{kind: opReg, reg: r} }
func keep(r asm.Register) operand { return operand{kind: opKeep, reg: r} }
func imm(v int64) operand         { return operand{kind: opImm, imm: v} }
func scr(off uint32) operand      { return operand{kind: opScratch, imm: int64(off)} }
func mapOp(name string) operand   { return operand{kind: opMap, name: name} }
func ctxOp() operand              { return operand{kind: opCtx} }

// call emits a helper call with spilling: arguments are staged on the
// stack, live caller-saved temporaries are saved, R1..R5 are loaded, the
// helper runs, and the temporaries come back. The result is in R0.
func (f *fn) call(h asm.BuiltinFunc, args ...operand) {
	f.callInsn(h, "", args...)
}

// callFunc calls a BPF function by symbol with the same discipline.
func (f *fn) callFunc(sym string, args ...operand) {
	f.callInsn(0, sym, args...)
}

func (f *fn) callInsn(h asm.BuiltinFunc, sym string, args ...operand) {
	for i, a := range args {
		if a.kind == opReg || a.kind == opKeep {
			f.emit(asm.StoreMem(asm.R10, argSlot(i), a.reg, asm.DWord))
		}
	}
	for _, a := range args {
		if a.kind == opReg {
			f.free(a.reg)
		}
	}
	var saved []asm.Register
	for _, r := range pool {
		if f.used[r] && r >= asm.R1 && r <= asm.R5 {
			saved = append(saved, r)
			f.emit(asm.StoreMem(asm.R10, spillSlot(r), r, asm.DWord))
		}
	}
	for i, a := range args {
		dst := asm.R1 + asm.Register(i)
		switch a.kind {
		case opReg, opKeep:
			f.emit(asm.LoadMem(dst, asm.R10, argSlot(i), asm.DWord))
		case opImm:
			f.movImm(dst, a.imm)
		case opScratch:
			f.emit(asm.Mov.Reg(dst, regScratch))
			if a.imm != 0 {
				f.emit(asm.Add.Imm(dst, int32(a.imm)))
			}
		case opStack:
			f.emit(asm.Mov.Reg(dst, asm.R10), asm.Add.Imm(dst, int32(a.imm)))
		case opMap:
			f.emit(asm.LoadMapPtr(dst, 0).WithReference(a.name))
			f.g.useMap(a.name)
		case opCtx:
			f.emit(asm.Mov.Reg(dst, regCtx))
		case opFunc:
			f.emit(asm.Instruction{OpCode: asm.LoadImmOp(asm.DWord), Dst: dst, Src: asm.PseudoFunc, Constant: -1}.WithReference(a.name))
		}
	}
	if sym != "" {
		f.emit(asm.Call.Label(sym))
	} else {
		f.emit(h.Call())
	}
	for _, r := range saved {
		f.emit(asm.LoadMem(r, asm.R10, spillSlot(r), asm.DWord))
	}
}

// result moves R0 into a fresh temporary.
func (f *fn) result() asm.Register {
	r := f.alloc()
	f.emit(asm.Mov.Reg(r, asm.R0))
	return r
}

// movImm loads a 64-bit constant.
func (f *fn) movImm(r asm.Register, v int64) {
	if v >= -1<<31 && v < 1<<31 {
		f.emit(asm.Mov.Imm(r, int32(v)))
	} else {
		f.emit(asm.LoadImm(r, v, asm.DWord))
	}
}

// scratchPtr sets r to R7 + off.
func (f *fn) scratchPtr(r asm.Register, off uint32) {
	f.emit(asm.Mov.Reg(r, regScratch))
	if off != 0 {
		f.emit(asm.Add.Imm(r, int32(off)))
	}
}

// fault emits the code taken when a check fails: it records the fault
// kind, the offending value (from illval, or 0 when illval < 0) and the pc
// in mstate and jumps to the clause's fault tail.
func (f *fn) fault(code int, illval asm.Register, hasIllval bool) {
	ms := int16(f.g.layout.MState)
	pc := f.pc()
	f.emit(storeImm(regScratch, ms+abi.MStateFault, int64(code), asm.DWord))
	if hasIllval {
		f.emit(asm.StoreMem(regScratch, ms+abi.MStateIllval, illval, asm.DWord))
	} else {
		f.emit(storeImm(regScratch, ms+abi.MStateIllval, 0, asm.DWord))
	}
	f.emit(storeImm(regScratch, ms+msFaultPC, int64(pc), asm.DWord))
	if f.faultLabel == "" {
		f.faultLabel = f.label("fault")
	}
	f.emit(asm.Ja.Label(f.faultLabel))
}

// storeImm is asm.StoreImm that also encodes 8-byte stores of a
// sign-extended 32-bit immediate (asm.StoreImm refuses DWord).
func storeImm(dst asm.Register, off int16, v int64, size asm.Size) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(size), Dst: dst, Offset: off, Constant: v}
}

// atomicMem is op.Mem with the operation also in Constant: cilium/ebpf
// v0.22.0 marshals the immediate before filling it in from the opcode, so
// without this every atomic encodes as a plain atomic add.
func atomicMem(op asm.AtomicOp, dst, src asm.Register, size asm.Size, off int16) asm.Instruction {
	ins := op.Mem(dst, src, size, off)
	ins.Constant = int64(op >> 8)
	return ins
}

// inverse maps a conditional jump to its negation.
var inverse = map[asm.JumpOp]asm.JumpOp{
	asm.JEq: asm.JNE, asm.JNE: asm.JEq, asm.JGE: asm.JLT, asm.JLT: asm.JGE,
	asm.JGT: asm.JLE, asm.JLE: asm.JGT, asm.JSGE: asm.JSLT, asm.JSLT: asm.JSGE,
	asm.JSGT: asm.JSLE, asm.JSLE: asm.JSGT,
}

// exitIf emits a loop exit: the conditional jump j (to its label) is
// turned around so that leaving the loop is the fall-through path. The
// verifier explores fall-through paths first and keeps the jump targets
// on a stack bounded at 8192 entries; with exits falling through, every
// iteration's continuation waits there instead of every exit, and the
// stack stays shallow however many loops follow.
func (f *fn) exitIf(j asm.Instruction) {
	stay := f.label("stay")
	exit := j.Reference()
	j.OpCode = j.OpCode.SetJumpOp(inverse[j.OpCode.JumpOp()])
	f.emit(j.WithReference(stay), asm.Ja.Label(exit))
	f.mark(stay)
}

// isaV4 reports whether the target kernel accepts ISA v4 instructions
// (Options.ISA 0 or 4); they are one instruction where v3 needs two or
// eight, so they are used where the kernel has them.
func (g *gen) isaV4() bool { return g.opts.ISA == 0 || g.opts.ISA >= 4 }

// signExtend sign-extends the low size bytes (1, 2 or 4) of r to 64
// bits: one movsx on ISA v4, a shift pair before it.
func (f *fn) signExtend(r asm.Register, size int) {
	if f.g.isaV4() {
		switch size {
		case 1:
			f.emit(asm.MovSX8.Reg(r, r))
		case 2:
			f.emit(asm.MovSX16.Reg(r, r))
		default:
			f.emit(asm.MovSX32.Reg(r, r))
		}
		return
	}
	n := int32(64 - 8*size)
	f.emit(asm.LSh.Imm(r, n), asm.ArSh.Imm(r, n))
}
