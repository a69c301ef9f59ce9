package provider

import (
	"io"

	"github.com/cilium/ebpf/asm"
)

// CopyArgs returns prologue instructions that copy n u64 arguments from the
// context (R6) at offset ctxOff into the machine state's arg[] and zero the
// remaining ones, so clauses never see a previous firing's arguments.
func CopyArgs(ctxOff int16, n int, mstate int16) asm.Instructions {
	var insns asm.Instructions
	for i := 0; i < NumArgs; i++ {
		dst := mstate + MStateArgs + int16(8*i)
		if i < n {
			insns = append(insns,
				asm.LoadMem(asm.R0, asm.R6, ctxOff+int16(8*i), asm.DWord),
				asm.StoreMem(asm.R7, dst, asm.R0, asm.DWord))
		} else {
			insns = append(insns, asm.StoreImm(asm.R7, dst, 0, asm.DWord))
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
