//go:build !amd64 && !arm64

package profile

import "github.com/cilium/ebpf/asm"

// userMode reports every pc as a kernel pc with value 0 on architectures
// whose pt_regs layout we do not know yet.
func userMode() asm.Instructions {
	return asm.Instructions{
		asm.Mov.Imm(asm.R0, 0),
		asm.Mov.Imm(asm.R1, 0),
	}
}
