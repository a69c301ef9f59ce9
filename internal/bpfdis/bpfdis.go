// Package bpfdis writes BPF instruction listings in the layout of Oracle
// dtrace-utils' disassembler (libdtrace/dt_dis.c), which dtrace -S prints:
//
//	INS  OFF    OPCODE                  INSTRUCTION
//	0007 00056: 15 1 0 0002 00000002    jeq  %r1, 2, 2                ! -> 010
//
// Each line gives the instruction's index (in 8-byte slots), its byte
// offset, its encoding (opcode byte, destination and source registers,
// offset, immediate, in hex) and the instruction in dtrace-utils'
// assembler syntax: registers %r0-%r9 and %fp, memory operands
// [%reg+off], helpers called by their kernel names (bpf_map_lookup_elem),
// and comments after "!" at column 30 of the instruction (jump targets,
// relocation names).
//
// The opcodes dtrace-utils' table names are written as it writes them.
// Those it has no entry for, which our code generator emits for ISA v3
// and v4 (atomic operations other than add, sign-extending moves and
// loads, signed division, 64-bit byte swaps, 32-bit-offset jumps), get
// mnemonics in the same style rather than its "(illegal opcode)".
package bpfdis

import (
	"fmt"
	"strings"
)

// Insn is one 8-byte BPF instruction slot as the kernel reads it. A
// 64-bit immediate load (lddw) takes two slots.
type Insn struct {
	Code     uint8
	Dst, Src uint8
	Off      int16
	Imm      int32
}

// instrLen is the column of the instruction text at which comments
// start (dt_dis.c's DT_DIS_INSTR_LEN).
const instrLen = 30

// Columns is the heading line of a listing.
var Columns = fmt.Sprintf("%-4s %-5s  %-20s    %s", "INS", "OFF", "OPCODE", "INSTRUCTION")

// Prefix is the index, offset and encoding columns of slot i, up to the
// instruction text.
func Prefix(i int, in Insn) string {
	return fmt.Sprintf("%04d %05d: %02x %01x %01x %04x %08x    ",
		i, i*8, in.Code, in.Dst, in.Src, uint16(in.Off), uint32(in.Imm))
}

// Reg names register r as dtrace-utils does (%fp for r10).
func Reg(r uint8) string {
	if r == 10 {
		return "%fp"
	}
	if r < 10 {
		return fmt.Sprintf("%%r%d", r)
	}
	return fmt.Sprintf("%%r%d?", r)
}

// comment appends "! text" to an instruction text, at column instrLen
// or one blank after a longer text (dt_dis.c pads to DT_DIS_INSTR_LEN
// and writes nothing more for a longer text).
func comment(text, c string) string {
	if c == "" {
		return text
	}
	pad := max(instrLen-len(text), 0)
	return text + strings.Repeat(" ", pad) + "! " + c
}

// Opcode classes, operations and modes (linux/bpf.h, bpf_common.h).
const (
	clsLD    = 0x00
	clsLDX   = 0x01
	clsST    = 0x02
	clsSTX   = 0x03
	clsALU   = 0x04
	clsJMP   = 0x05
	clsJMP32 = 0x06
	clsALU64 = 0x07

	srcX = 0x08

	modeIMM    = 0x00
	modeMEM    = 0x60
	modeMEMSX  = 0x80
	modeATOMIC = 0xc0

	opNeg  = 0x80
	opMov  = 0xb0
	opEnd  = 0xd0
	opDiv  = 0x30
	opMod  = 0x90
	opJA   = 0x00
	opCall = 0x80
	opExit = 0x90

	pseudoCall  = 1
	pseudoKfunc = 2

	atomicFetch   = 0x01
	atomicAdd     = 0x00
	atomicOr      = 0x40
	atomicAnd     = 0x50
	atomicXor     = 0xa0
	atomicXchg    = 0xe0 | atomicFetch
	atomicCmpXchg = 0xf0 | atomicFetch
)

var aluNames = map[uint8]string{
	0x00: "add", 0x10: "sub", 0x20: "mul", 0x30: "div", 0x40: "or", 0x50: "and",
	0x60: "lsh", 0x70: "rsh", 0x90: "mod", 0xa0: "xor", 0xb0: "mov", 0xc0: "arsh",
}

var jmpNames = map[uint8]string{
	0x10: "jeq", 0x20: "jgt", 0x30: "jge", 0x40: "jset", 0x50: "jne", 0x60: "jsgt",
	0x70: "jsge", 0xa0: "jlt", 0xb0: "jle", 0xc0: "jslt", 0xd0: "jsle",
}

// signedJmp holds the jumps whose immediate dt_dis.c prints signed.
var signedJmp = map[uint8]bool{0x60: true, 0x70: true, 0xc0: true, 0xd0: true}

var sizeSuffix = map[uint8]string{0x10: "b", 0x08: "h", 0x00: "w", 0x18: "dw"}

// Note is what the listing knows of a slot beyond its encoding.
type Note struct {
	// Name is the symbol the instruction refers to, resolved when the
	// program is loaded (dt_dis.c's relocation name): the map of a map
	// load, the function of a BPF-to-BPF call.
	Name string
	// Label names the target of a jump, written after its index.
	Label string
	// Value is what the loader resolved Name to, for the relocation
	// table ("" for *UND*: not known yet): a map's file descriptor, the
	// index of a called function's first instruction in the program (as
	// dtrace-utils' linker records it).
	Value string
}

// Format returns the instruction text of slot i of prog (the part after
// Prefix) and how many further slots it took (1 for lddw, else 0). For
// lddw the text holds the second slot's line too, after a newline.
// helper names helper calls by number ("" for an unknown helper).
func Format(prog []Insn, i int, n Note, helper func(int32) string) (string, int) {
	in := prog[i]
	code := in.Code
	cls := code & 0x07
	switch cls {
	case clsALU, clsALU64:
		return formatALU(in, n), 0
	case clsJMP, clsJMP32:
		return formatJump(in, i, n, helper), 0
	case clsLDX:
		mode := code & 0xe0
		sz, ok := sizeSuffix[code&0x18]
		if !ok || (mode != modeMEM && mode != modeMEMSX) {
			break
		}
		name := "ld" + sz
		if mode == modeMEMSX {
			name = "lds" + sz
		}
		text := fmt.Sprintf("%-4s %s, [%s%+d]", name, Reg(in.Dst), Reg(in.Src), in.Off)
		return comment(text, n.Name), 0
	case clsSTX:
		mode := code & 0xe0
		sz, ok := sizeSuffix[code&0x18]
		if !ok {
			break
		}
		var name string
		switch mode {
		case modeMEM:
			name = "st" + sz
		case modeATOMIC:
			if sz != "w" && sz != "dw" {
				return "(illegal opcode)", 0
			}
			name = atomicName(in.Imm)
		default:
			return "(illegal opcode)", 0
		}
		text := fmt.Sprintf("%-4s [%s%+d], %s", name, Reg(in.Dst), in.Off, Reg(in.Src))
		return comment(text, n.Name), 0
	case clsST:
		sz, ok := sizeSuffix[code&0x18]
		if !ok || code&0xe0 != modeMEM {
			break
		}
		text := fmt.Sprintf("%-4s [%s%+d], %d", "st"+sz, Reg(in.Dst), in.Off, in.Imm)
		if n.Name != "" {
			text = comment(text, "= "+n.Name)
		}
		return text, 0
	case clsLD:
		if code != clsLD|modeIMM|0x18 {
			break
		}
		var hi int32
		var next Insn
		if i+1 < len(prog) {
			next = prog[i+1]
			hi = next.Imm
		}
		text := fmt.Sprintf("%-4s %s, 0x%08x%08x\n", "lddw", Reg(in.Dst), uint32(hi), uint32(in.Imm))
		text += Prefix(i+1, next)
		if n.Name != "" {
			text += strings.Repeat(" ", instrLen) + "! " + n.Name
		}
		return text, 1
	}
	return "(illegal opcode)", 0
}

// atomicName names an atomic operation: xadd as dtrace-utils writes the
// one it emits, the others after it.
func atomicName(imm int32) string {
	switch imm {
	case atomicAdd:
		return "xadd"
	case atomicOr:
		return "xor"
	case atomicAnd:
		return "xand"
	case atomicXor:
		return "xxor"
	case atomicAdd | atomicFetch:
		return "xfadd"
	case atomicOr | atomicFetch:
		return "xfor"
	case atomicAnd | atomicFetch:
		return "xfand"
	case atomicXor | atomicFetch:
		return "xfxor"
	case atomicXchg:
		return "xchg"
	case atomicCmpXchg:
		return "cmpxchg"
	}
	return fmt.Sprintf("atomic#%#x", uint32(imm))
}

func formatALU(in Insn, n Note) string {
	op := in.Code & 0xf0
	x := in.Code&srcX != 0
	alu64 := in.Code&0x07 == clsALU64
	if op == opNeg {
		if x {
			return "(illegal opcode)"
		}
		return fmt.Sprintf("%-4s %s", "neg", Reg(in.Dst))
	}
	var name string
	switch {
	case op == opEnd && !alu64:
		name = "tole"
		if x {
			name = "tobe"
		}
		x = false // the width is in the immediate
	case op == opEnd:
		name = "bswap"
		if x {
			return "(illegal opcode)"
		}
	default:
		var ok bool
		if name, ok = aluNames[op]; !ok {
			return "(illegal opcode)"
		}
		// ISA v4's signed division and sign-extending moves share
		// opcodes with div, mod and mov (dt_dis.c does not know them).
		switch {
		case (op == opDiv || op == opMod) && in.Off == 1:
			name = "s" + name
		case op == opMov && x && in.Off != 0:
			name = fmt.Sprintf("movs%d", in.Off)
		}
	}
	if x {
		return fmt.Sprintf("%-4s %s, %s", name, Reg(in.Dst), Reg(in.Src))
	}
	return comment(fmt.Sprintf("%-4s %s, %d", name, Reg(in.Dst), in.Imm), n.Name)
}

func formatJump(in Insn, i int, n Note, helper func(int32) string) string {
	op := in.Code & 0xf0
	x := in.Code&srcX != 0
	jmp32 := in.Code&0x07 == clsJMP32
	target := func(off int) string {
		c := fmt.Sprintf("-> %03d", i+1+off)
		if n.Label != "" {
			c += " " + n.Label
		}
		return c
	}
	switch {
	case op == opJA && !x:
		off := int(in.Off)
		if jmp32 {
			// ISA v4's gotol: the offset is in the immediate.
			off = int(in.Imm)
			return comment(fmt.Sprintf("%-4s %d", "jal", off), target(off))
		}
		if off == 0 {
			return "nop"
		}
		return comment(fmt.Sprintf("%-4s %d", "ja", off), target(off))
	case op == opCall && !jmp32 && !x:
		return formatCall(in, n, helper)
	case op == opExit && !jmp32 && !x:
		return "exit"
	}
	name, ok := jmpNames[op]
	if !ok {
		return "(illegal opcode)"
	}
	var text string
	switch {
	case x:
		text = fmt.Sprintf("%-4s %s, %s, %d", name, Reg(in.Dst), Reg(in.Src), in.Off)
	case signedJmp[op]:
		text = fmt.Sprintf("%-4s %s, %d, %d", name, Reg(in.Dst), in.Imm, in.Off)
	default:
		text = fmt.Sprintf("%-4s %s, %d, %d", name, Reg(in.Dst), uint32(in.Imm), in.Off)
	}
	return comment(text, target(int(in.Off)))
}

func formatCall(in Insn, n Note, helper func(int32) string) string {
	switch in.Src {
	case pseudoCall:
		if n.Name != "" {
			return fmt.Sprintf("%-4s %s", "call", n.Name)
		}
		return fmt.Sprintf("%-4s %d", "call", in.Imm)
	case pseudoKfunc:
		name := n.Name
		if name == "" {
			name = fmt.Sprintf("btf#%d", in.Imm)
		}
		return comment(fmt.Sprintf("%-4s %s", "call", name), "kfunc")
	}
	if fn := helper(in.Imm); fn != "" {
		return fmt.Sprintf("%-4s %s", "call", fn)
	}
	return comment(fmt.Sprintf("%-4s helper#%d", "call", in.Imm), "unknown helper")
}
