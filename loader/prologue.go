package loader

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
)

// ScratchPrologue is how every probe program begins: R6 keeps the
// context, and R7 becomes this CPU's scratch area (abi.MapScratch), or
// the program returns 0 when the lookup fails. symbol names the first
// instruction (the program); have names the one after the lookup
// succeeded, where R7 is set.
func ScratchPrologue(symbol, have string) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1).WithSymbol(symbol),
		asm.FnGetSmpProcessorId.Call(),
		asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word),
		asm.LoadMapPtr(asm.R1, 0).WithReference(abi.MapScratch),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JNE.Imm(asm.R0, 0, have),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
		asm.Mov.Reg(asm.R7, asm.R0).WithSymbol(have),
	}
}
