package provider

import (
	"io"

	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
)

// CopyArgs returns prologue instructions that copy n u64 arguments from the
// context (R6) at offset ctxOff into the machine state's arg[] and zero the
// remaining ones, so clauses never see a previous firing's arguments.
func CopyArgs(ctxOff int16, n int, mstate int16) asm.Instructions {
	var insns asm.Instructions
	for i := 0; i < abi.MStateNArgs; i++ {
		dst := mstate + abi.MStateArgs + int16(8*i)
		if i < n {
			insns = append(insns,
				asm.LoadMem(asm.R0, asm.R6, ctxOff+int16(8*i), asm.DWord),
				asm.StoreMem(asm.R7, dst, asm.R0, asm.DWord))
		} else {
			insns = append(insns, StoreImmDW(asm.R7, dst, 0))
		}
	}
	return insns
}

// closers closes several attachments in reverse order.
type closers []io.Closer

// Closers returns a Closer that closes every element, last first, and
// reports the first error.
func Closers(cs ...io.Closer) io.Closer {
	return closers(cs)
}

func (cs closers) Close() error {
	var first error
	for i := len(cs) - 1; i >= 0; i-- {
		if err := cs[i].Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// StoreImmDW stores the sign-extended 32-bit value into the u64 at
// dst+off. The kernel accepts BPF_ST|BPF_DW; asm.StoreImm refuses DWord.
func StoreImmDW(dst asm.Register, off int16, value int32) asm.Instruction {
	return asm.Instruction{
		OpCode:   asm.OpCode(asm.StClass).SetMode(asm.MemMode).SetSize(asm.DWord),
		Dst:      dst,
		Offset:   off,
		Constant: int64(value),
	}
}
