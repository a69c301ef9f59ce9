package kfeature

import "github.com/cilium/ebpf/asm"

// V4Form names the ISA v4 form ins uses ("sign-extending move"), or
// returns "" for an instruction older kernels accept.
func V4Form(ins asm.Instruction) string {
	op := ins.OpCode
	switch op.Class() {
	case asm.ALUClass, asm.ALU64Class:
		switch op.ALUOp() {
		case asm.Mov:
			if ins.Offset != 0 || op.Source() == asm.RegSource && ins.Constant != 0 {
				return "move with reserved fields set"
			}
		case asm.MovSX8, asm.MovSX16, asm.MovSX32:
			return "sign-extending move"
		case asm.SDiv:
			return "signed division"
		case asm.SMod:
			return "signed modulo"
		case asm.Swap:
			if op.Class() == asm.ALU64Class {
				return "unconditional byte swap"
			}
		}
	case asm.LdXClass:
		if op.Mode() == asm.MemSXMode {
			return "sign-extending load"
		}
	case asm.Jump32Class:
		if op.JumpOp() == asm.Ja {
			return "32-bit jump (gotol)"
		}
	}
	return ""
}

// FirstV4 returns the index and form of the first ISA v4 instruction of
// insns, or -1 and "".
func FirstV4(insns asm.Instructions) (int, string) {
	for i, ins := range insns {
		if s := V4Form(ins); s != "" {
			return i, s
		}
	}
	return -1, ""
}
