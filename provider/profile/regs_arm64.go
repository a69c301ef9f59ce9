package profile

import "github.com/cilium/ebpf/asm"

// userMode loads the pc from struct user_pt_regs (arm64: pc at 256, pstate
// at 264) into R0 and sets R1 non-zero when the exception level is EL0.
func userMode() asm.Instructions {
	return asm.Instructions{
		asm.LoadMem(asm.R0, asm.R6, 256, asm.DWord),
		asm.LoadMem(asm.R1, asm.R6, 264, asm.DWord),
		asm.And.Imm(asm.R1, 0xf),
		asm.Mov.Imm(asm.R2, 1),
		asm.JEq.Imm(asm.R1, 0, "dt_profile_el0"),
		asm.Mov.Imm(asm.R2, 0),
		asm.Mov.Reg(asm.R1, asm.R2).WithSymbol("dt_profile_el0"),
	}
}
