package profile

import "github.com/cilium/ebpf/asm"

// userMode loads the pc from struct pt_regs (x86-64: ip at 128, cs at 136)
// into R0 and sets R1 to the privilege level bits of cs (non-zero: user).
func userMode() asm.Instructions {
	return asm.Instructions{
		asm.LoadMem(asm.R0, asm.R6, 128, asm.DWord),
		asm.LoadMem(asm.R1, asm.R6, 136, asm.DWord),
		asm.And.Imm(asm.R1, 3),
	}
}
