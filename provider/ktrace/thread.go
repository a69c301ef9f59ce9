package ktrace

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/provider"
)

// threadKeySlot is the stack slot ThreadEntry keeps the thread id in, the
// key of a per-thread map: below loadSlot.
const threadKeySlot = -24

// ThreadEntry sets R0 to this thread's entry of hash map m (4-byte keys:
// the thread id) and ends the firing when there is none. With create it
// first makes the entry, its bytes copied from the scratch area (R7), for
// the caller to overwrite. It clobbers R0-R5.
func (e *Emitter) ThreadEntry(m string, create bool) {
	e.Emit(asm.FnGetCurrentPidTgid.Call(), asm.StoreMem(asm.RFP, threadKeySlot, asm.R0, asm.Word))
	if create {
		e.Emit(
			asm.LoadMapPtr(asm.R1, 0).WithReference(m),
			asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, threadKeySlot),
			asm.Mov.Reg(asm.R3, asm.R7),
			asm.Mov.Imm(asm.R4, 0),
			asm.FnMapUpdateElem.Call(),
		)
	}
	e.Emit(
		asm.LoadMapPtr(asm.R1, 0).WithReference(m),
		asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, threadKeySlot),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, provider.SkipLabel),
	)
}
