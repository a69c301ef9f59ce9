package unwind

import (
	"errors"
	"fmt"
)

// x86-64 DWARF register numbers the unwinder follows.
const (
	regRBX = 3
	regRBP = 6
	regRSP = 7
	regRIP = 16 // the return address column
)

// regOffsets gives, for each x86-64 DWARF general register (0 rax, 1 rdx,
// 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15), its offset in
// the kernel's struct pt_regs (the registers of the innermost frame) and
// in a signal frame's struct sigcontext (those of the frame a signal
// interrupted): where the BPF unwinder reads a CFA register it does not
// track from frame to frame.
var regOffsets = [16][2]uint8{
	{80, 104}, {96, 96}, {88, 112}, {40, 88}, {104, 72}, {112, 64}, {32, 80}, {152, 120},
	{72, 0}, {64, 8}, {56, 16}, {48, 24}, {24, 32}, {16, 40}, {8, 48}, {0, 56},
}

// CFAKind says how a row finds the canonical frame address (the caller's
// stack pointer) and what kind of frame it is. The values are the ones the
// BPF unwinder reads (internal/abi.UW*).
type CFAKind uint8

// Kinds of rows.
const (
	// CFANone: no rule we can follow here (no CFI, or a rule the BPF
	// unwinder does not evaluate): walk frame pointers.
	CFANone CFAKind = iota
	// CFARSP: CFA = rsp + CFAOff.
	CFARSP
	// CFARBP: CFA = rbp + CFAOff.
	CFARBP
	// CFAPLT: a PLT stub's expression, CFA = rsp + CFAOff, plus 8 when
	// (rip & 15) >= Aux (the stub pushed a word at that point).
	CFAPLT
	// CFASignal: a signal trampoline ('S' augmentation): the interrupted
	// registers are in the ucontext at rsp.
	CFASignal
	// CFAEnd: the return address is undefined: the outermost frame
	// (_start, a thread's start routine).
	CFAEnd
	// CFARBX: CFA = rbx + CFAOff (ld.so's _dl_runtime_resolve keeps
	// its CFA in rbx while the stack is realigned). rbx is callee-saved
	// and tracked from frame to frame by the rows' RBX rules.
	CFARBX
	// CFAReg: CFA = another general register + CFAOff, known only where
	// every register is: in the innermost frame (the kernel's pt_regs)
	// and in the frame a signal interrupted (its sigcontext). Aux holds
	// the register's offset in pt_regs (low byte) and in the
	// sigcontext (high byte).
	CFAReg
)

// RBPKind says where the caller's value of a callee-saved register the
// unwinder tracks (rbp, rbx) is.
type RBPKind uint8

// Where a row keeps the caller's rbp or rbx.
const (
	RBPSame RBPKind = iota // unchanged
	RBPAt                  // saved at CFA + the offset
	RBPLost                // a rule we do not follow: unknown from here
)

// Row is the unwind rule for code from PC up to the next row's PC.
type Row struct {
	PC     uint64
	CFA    CFAKind
	Aux    uint16
	CFAOff int32
	RBP    RBPKind
	RBPOff int32
	RBX    RBPKind
	RBXOff int32
}

func (r Row) sameRule(o Row) bool {
	r.PC = o.PC
	return r == o
}

func (r Row) String() string {
	s := ""
	switch r.CFA {
	case CFANone:
		return fmt.Sprintf("%#x fp", r.PC)
	case CFARSP:
		s = fmt.Sprintf("cfa=rsp%+d", r.CFAOff)
	case CFARBP:
		s = fmt.Sprintf("cfa=rbp%+d", r.CFAOff)
	case CFARBX:
		s = fmt.Sprintf("cfa=rbx%+d", r.CFAOff)
	case CFAReg:
		s = fmt.Sprintf("cfa=reg(%d,%d)%+d", r.Aux&0xff, r.Aux>>8, r.CFAOff)
	case CFAPLT:
		s = fmt.Sprintf("cfa=plt(rsp%+d,%d)", r.CFAOff, r.Aux)
	case CFASignal:
		return fmt.Sprintf("%#x signal", r.PC)
	case CFAEnd:
		return fmt.Sprintf("%#x end", r.PC)
	}
	switch r.RBP {
	case RBPAt:
		s += fmt.Sprintf(" rbp=[cfa%+d]", r.RBPOff)
	case RBPLost:
		s += " rbp=?"
	}
	switch r.RBX {
	case RBPAt:
		s += fmt.Sprintf(" rbx=[cfa%+d]", r.RBXOff)
	case RBPLost:
		s += " rbx=?"
	}
	return fmt.Sprintf("%#x %s", r.PC, s)
}

// rule kinds of a register.
const (
	ruleSame = iota // unspecified or same value
	ruleUndef
	ruleOffset // saved at CFA + off
	ruleOther  // register, expression, val_*: not followed
)

type regRule struct {
	kind int
	off  int64
}

// state is one row of the CFI table as DWARF describes it, restricted to
// the columns x86-64 unwinding needs.
type state struct {
	cfaReg       uint64
	cfaOff       int64
	cfaExpr      []byte // non-nil for DW_CFA_def_cfa_expression
	rbp, rbx, ra regRule
}

// DW_CFA_* opcodes.
const (
	cfaAdvanceLoc        = 0x40
	cfaOffset            = 0x80
	cfaRestore           = 0xc0
	cfaNop               = 0x00
	cfaSetLoc            = 0x01
	cfaAdvanceLoc1       = 0x02
	cfaAdvanceLoc2       = 0x03
	cfaAdvanceLoc4       = 0x04
	cfaOffsetExtended    = 0x05
	cfaRestoreExtended   = 0x06
	cfaUndefined         = 0x07
	cfaSameValue         = 0x08
	cfaRegister          = 0x09
	cfaRememberState     = 0x0a
	cfaRestoreState      = 0x0b
	cfaDefCFA            = 0x0c
	cfaDefCFARegister    = 0x0d
	cfaDefCFAOffset      = 0x0e
	cfaDefCFAExpression  = 0x0f
	cfaExpression        = 0x10
	cfaOffsetExtendedSF  = 0x11
	cfaDefCFASF          = 0x12
	cfaDefCFAOffsetSF    = 0x13
	cfaValOffset         = 0x14
	cfaValOffsetSF       = 0x15
	cfaValExpression     = 0x16
	cfaGNUWindowSave     = 0x2d
	cfaGNUArgsSize       = 0x2e
	cfaGNUNegOffsetExtSF = 0x2f
)

// Rows runs the FDE's CIE and FDE instructions and returns its rows in
// address order, the last one covering up to f.End. A bad instruction
// ends the rows there with an error; what came before stays good.
func (f FDE) Rows() ([]Row, error) {
	c := f.CIE
	if c.init == nil {
		// Once per CIE: a section's FDEs share a few CIEs.
		c.init = &state{}
		loc := f.Begin
		if _, err := run(c, c.Instructions, c.init, nil, &loc, nil); err != nil {
			c.initErr = fmt.Errorf("CIE instructions: %w", err)
		}
	}
	if c.initErr != nil {
		return nil, c.initErr
	}
	init := *c.init
	st := init
	loc := f.Begin
	var rows []Row
	emit := func(at uint64, s *state) {
		row := c.row(at, s)
		if n := len(rows); n > 0 && rows[n-1].PC == at {
			rows[n-1] = row
			return
		}
		rows = append(rows, row)
	}
	stop, err := run(c, f.Instructions, &st, &init, &loc, func(next uint64) bool {
		emit(loc, &st)
		return next >= f.End || len(rows) >= maxRows
	})
	if !stop && loc < f.End {
		emit(loc, &st)
	}
	return rows, err
}

// run interprets instructions into st. init is the state after the CIE's
// instructions (for DW_CFA_restore; nil while running them). advance is
// called before the location moves to next; when it returns true run
// stops and reports true.
func run(c *CIE, ins []byte, st, init *state, loc *uint64, advance func(next uint64) bool) (bool, error) {
	r := reader{b: ins}
	var stack []state
	move := func(delta uint64) bool {
		next := *loc + delta*c.CodeAlign
		if next < *loc || (c.CodeAlign != 0 && delta > (1<<63)/c.CodeAlign) {
			return true // wraps: no address is past it
		}
		if advance != nil && advance(next) {
			return true
		}
		*loc = next
		return false
	}
	restore := func(reg uint64) {
		if init == nil {
			return
		}
		switch reg {
		case regRBP:
			st.rbp = init.rbp
		case regRBX:
			st.rbx = init.rbx
		case c.RAReg:
			st.ra = init.ra
		}
	}
	set := func(reg uint64, rr regRule) {
		switch reg {
		case regRBP:
			st.rbp = rr
		case regRBX:
			st.rbx = rr
		case c.RAReg:
			st.ra = rr
		}
	}
	for r.off < uint64(len(r.b)) {
		op, _ := r.u8()
		var ok = true
		switch op & 0xc0 {
		case cfaAdvanceLoc:
			if move(uint64(op & 0x3f)) {
				return true, nil
			}
			continue
		case cfaOffset:
			var off uint64
			off, ok = r.uleb()
			set(uint64(op&0x3f), regRule{ruleOffset, int64(off) * c.DataAlign})
		case cfaRestore:
			restore(uint64(op & 0x3f))
		default:
			var a, b uint64
			var sb int64
			switch op {
			case cfaNop:
			case cfaSetLoc:
				var at uint64
				at, ok = r.pointer(c.FDEEncoding&0x0f, 0, c.AddressSize)
				if ok && c.FDEEncoding&peApplies != 0 {
					return false, errors.New("DW_CFA_set_loc relative to its position")
				}
				if ok && at >= *loc {
					if advance != nil && advance(at) {
						return true, nil
					}
					*loc = at
				}
			case cfaAdvanceLoc1, cfaAdvanceLoc2, cfaAdvanceLoc4:
				// The operand's size: 1, 2 or 4 bytes.
				var d uint64
				d, ok = r.uint(1 << (op - cfaAdvanceLoc1))
				if ok && move(d) {
					return true, nil
				}
			case cfaOffsetExtended:
				a, ok = r.uleb()
				if ok {
					b, ok = r.uleb()
					set(a, regRule{ruleOffset, int64(b) * c.DataAlign})
				}
			case cfaRestoreExtended:
				a, ok = r.uleb()
				restore(a)
			case cfaUndefined:
				a, ok = r.uleb()
				set(a, regRule{kind: ruleUndef})
			case cfaSameValue:
				a, ok = r.uleb()
				set(a, regRule{kind: ruleSame})
			case cfaRegister, cfaValOffset, cfaValOffsetSF, cfaExpression, cfaValExpression:
				// Rules the unwinder does not follow: the register
				// is lost (ruleOther); the second operand is
				// skipped: an expression block, or a LEB128 number
				// (signed or not, the same bytes).
				a, ok = r.uleb()
				if ok {
					if op == cfaExpression || op == cfaValExpression {
						_, ok = r.block()
					} else {
						_, ok = r.uleb()
					}
					set(a, regRule{kind: ruleOther})
				}
			case cfaRememberState:
				if len(stack) >= maxStack {
					return false, errors.New("DW_CFA_remember_state nested too deep")
				}
				stack = append(stack, *st)
			case cfaRestoreState:
				if len(stack) == 0 {
					return false, errors.New("DW_CFA_restore_state without a remembered state")
				}
				// The CFA rule is part of the state that is restored
				// (DWARF 5, 6.4.2.4).
				*st = stack[len(stack)-1]
				stack = stack[:len(stack)-1]
			case cfaDefCFA:
				a, ok = r.uleb()
				if ok {
					b, ok = r.uleb()
					st.cfaReg, st.cfaOff, st.cfaExpr = a, int64(b), nil
				}
			case cfaDefCFASF:
				a, ok = r.uleb()
				if ok {
					sb, ok = r.sleb()
					st.cfaReg, st.cfaOff, st.cfaExpr = a, sb*c.DataAlign, nil
				}
			case cfaDefCFARegister:
				a, ok = r.uleb()
				st.cfaReg, st.cfaExpr = a, nil
			case cfaDefCFAOffset:
				b, ok = r.uleb()
				st.cfaOff = int64(b)
			case cfaDefCFAOffsetSF:
				sb, ok = r.sleb()
				st.cfaOff = sb * c.DataAlign
			case cfaDefCFAExpression:
				var blk []byte
				blk, ok = r.block()
				st.cfaExpr = blk
				if ok && blk == nil {
					st.cfaExpr = []byte{}
				}
			case cfaOffsetExtendedSF:
				a, ok = r.uleb()
				if ok {
					sb, ok = r.sleb()
					set(a, regRule{ruleOffset, sb * c.DataAlign})
				}
			case cfaGNUArgsSize:
				_, ok = r.uleb()
			case cfaGNUNegOffsetExtSF:
				a, ok = r.uleb()
				if ok {
					b, ok = r.uleb()
					set(a, regRule{ruleOffset, -int64(b) * c.DataAlign})
				}
			case cfaGNUWindowSave:
			default:
				return false, fmt.Errorf("unknown DW_CFA opcode %#x", op)
			}
		}
		if !ok {
			return false, errShort
		}
	}
	return false, nil
}

// block reads a ULEB128 length and that many bytes.
func (r *reader) block() ([]byte, bool) {
	n, ok := r.uleb()
	if !ok {
		return nil, false
	}
	return r.take(n)
}

// pltExpr is the CFA expression binutils writes for lazy-binding PLT
// entries: rsp + N + (((rip & 15) >= K) << 3). The bytes at pltExprN and
// pltExprK vary; the rest must match.
var pltExpr = []byte{
	0x77, 0, // DW_OP_breg7 (rsp) N (one-byte SLEB128)
	0x80, 0x00, // DW_OP_breg16 (rip) 0
	0x3f, // DW_OP_lit15
	0x1a, // DW_OP_and
	0x30, // DW_OP_litK
	0x2a, // DW_OP_ge
	0x33, // DW_OP_lit3
	0x24, // DW_OP_shl
	0x22, // DW_OP_plus
}

const (
	pltExprN = 1
	pltExprK = 6
)

// matchPLT reports the N and K of a PLT CFA expression.
func matchPLT(e []byte) (n int32, k uint16, ok bool) {
	if len(e) != len(pltExpr) {
		return 0, 0, false
	}
	for i := range e {
		if i == pltExprN || i == pltExprK {
			continue
		}
		if e[i] != pltExpr[i] {
			return 0, 0, false
		}
	}
	if e[pltExprN]&0x80 != 0 || e[pltExprK] < 0x30 || e[pltExprK] > 0x4f {
		return 0, 0, false
	}
	v := int32(e[pltExprN] & 0x7f)
	if v&0x40 != 0 {
		v -= 0x80
	}
	return v, uint16(e[pltExprK] - 0x30), true
}

// row compiles the state at pc into the unwinder's row.
func (c *CIE) row(pc uint64, s *state) Row {
	r := Row{PC: pc}
	if c.Signal {
		r.CFA = CFASignal
		return r
	}
	switch s.ra.kind {
	case ruleUndef:
		r.CFA = CFAEnd
		return r
	case ruleOffset:
		if s.ra.off != -8 {
			return r
		}
	default:
		return r
	}
	switch {
	case s.cfaExpr != nil:
		n, k, ok := matchPLT(s.cfaExpr)
		if !ok {
			return r
		}
		r.CFA, r.CFAOff, r.Aux = CFAPLT, n, k
	case s.cfaReg == regRSP:
		r.CFA = CFARSP
	case s.cfaReg == regRBP:
		r.CFA = CFARBP
	case s.cfaReg == regRBX:
		r.CFA = CFARBX
	case s.cfaReg < uint64(len(regOffsets)):
		r.CFA = CFAReg
		r.Aux = uint16(regOffsets[s.cfaReg][0]) | uint16(regOffsets[s.cfaReg][1])<<8
	default:
		return r
	}
	if s.cfaExpr == nil {
		if s.cfaOff < -1<<31 || s.cfaOff >= 1<<31 {
			return Row{PC: pc}
		}
		r.CFAOff = int32(s.cfaOff)
	}
	r.RBP, r.RBPOff = savedRule(s.rbp)
	r.RBX, r.RBXOff = savedRule(s.rbx)
	return r
}

// savedRule compiles a callee-saved register's rule. The BPF rows hold
// its offset from the CFA in 16 bits: registers are saved next to the
// return address, and one saved further away is not followed.
func savedRule(rr regRule) (RBPKind, int32) {
	switch rr.kind {
	case ruleOffset:
		if rr.off < -1<<15 || rr.off >= 1<<15 {
			return RBPLost, 0
		}
		return RBPAt, int32(rr.off)
	case ruleOther:
		return RBPLost, 0
	}
	return RBPSame, 0
}
