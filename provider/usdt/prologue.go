package usdt

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/pid"
)

// siteArgs returns instructions that load the arguments of one site into
// arg0..arg9 (0 past the last one). They clobber R0-R5 and R8.
func siteArgs(s Site, mstate int16) asm.Instructions {
	regs := pid.ArchRegs()
	var insns asm.Instructions
	for i := 0; i < abi.MStateNArgs; i++ {
		slot := mstate + abi.MStateArgs + int16(8*i)
		if i >= len(s.Args) || regs == nil {
			insns = append(insns, provider.StoreImmDW(asm.R7, slot, 0))
			continue
		}
		insns = append(insns, argInsns(s, s.Args[i], regs, slot)...)
	}
	return insns
}

func argInsns(s Site, a Arg, regs *pid.Regs, slot int16) asm.Instructions {
	switch a.Kind {
	case ArgConst:
		v := extend(a.Value, a.Size, a.Signed)
		if int64(int32(v)) == v {
			return asm.Instructions{provider.StoreImmDW(asm.R7, slot, int32(v))}
		}
		return asm.Instructions{
			asm.LoadImm(asm.R0, v, asm.DWord),
			asm.StoreMem(asm.R7, slot, asm.R0, asm.DWord),
		}
	case ArgReg:
		off, ok := regs.ByName[a.Reg]
		if !ok {
			return asm.Instructions{provider.StoreImmDW(asm.R7, slot, 0)}
		}
		insns := asm.Instructions{asm.LoadMem(asm.R0, asm.R6, off, asm.DWord)}
		if a.Shift != 0 {
			insns = append(insns, asm.RSh.Imm(asm.R0, int32(a.Shift)))
		}
		insns = append(insns, narrow(asm.R0, a.Size, a.Signed)...)
		return append(insns, asm.StoreMem(asm.R7, slot, asm.R0, asm.DWord))
	}
	// Memory: R3 = base + index*scale + displacement, where a symbol's
	// address is worked out from the firing site's run-time address (the
	// uprobe sets ip to the probed instruction), so that it holds for
	// position-independent code loaded anywhere.
	insns := asm.Instructions{asm.Mov.Imm(asm.R3, 0)}
	disp := a.Disp
	switch {
	case a.Sym != "":
		v, ok := s.Syms[a.Sym]
		if !ok {
			return asm.Instructions{provider.StoreImmDW(asm.R7, slot, 0)}
		}
		insns = append(insns, asm.LoadMem(asm.R3, asm.R6, regs.IP, asm.DWord))
		disp += int64(v - s.PC)
	case a.Reg == "rip":
		insns = append(insns, asm.LoadMem(asm.R3, asm.R6, regs.IP, asm.DWord))
	case a.Reg != "":
		off, ok := regs.ByName[a.Reg]
		if !ok {
			return asm.Instructions{provider.StoreImmDW(asm.R7, slot, 0)}
		}
		insns = append(insns, asm.LoadMem(asm.R3, asm.R6, off, asm.DWord))
	}
	if a.Index != "" {
		off, ok := regs.ByName[a.Index]
		if !ok {
			return asm.Instructions{provider.StoreImmDW(asm.R7, slot, 0)}
		}
		insns = append(insns, asm.LoadMem(asm.R0, asm.R6, off, asm.DWord))
		if a.Scale > 1 {
			insns = append(insns, asm.Mul.Imm(asm.R0, int32(a.Scale)))
		}
		insns = append(insns, asm.Add.Reg(asm.R3, asm.R0))
	}
	if int64(int32(disp)) == disp {
		if disp != 0 {
			insns = append(insns, asm.Add.Imm(asm.R3, int32(disp)))
		}
	} else {
		insns = append(insns, asm.LoadImm(asm.R0, disp, asm.DWord), asm.Add.Reg(asm.R3, asm.R0))
	}
	if a.Addr32 {
		insns = append(insns, asm.Mov.Reg32(asm.R3, asm.R3))
	}
	// Zero the slot first: the read fills only Size bytes (and zeroes
	// them itself when it faults).
	insns = append(insns,
		provider.StoreImmDW(asm.R7, slot, 0),
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.Add.Imm(asm.R1, int32(slot)),
		asm.Mov.Imm(asm.R2, int32(a.Size)),
		asm.FnProbeReadUser.Call(),
		asm.LoadMem(asm.R0, asm.R7, slot, asm.DWord),
	)
	insns = append(insns, narrow(asm.R0, a.Size, a.Signed)...)
	return append(insns, asm.StoreMem(asm.R7, slot, asm.R0, asm.DWord))
}

// narrow keeps the low size bytes of r, sign-extending them if signed.
func narrow(r asm.Register, size int, signed bool) asm.Instructions {
	if size >= 8 {
		return nil
	}
	sh := int32(64 - 8*size)
	if signed {
		return asm.Instructions{asm.LSh.Imm(r, sh), asm.ArSh.Imm(r, sh)}
	}
	return asm.Instructions{asm.LSh.Imm(r, sh), asm.RSh.Imm(r, sh)}
}

// extend narrows a constant as narrow does at run time.
func extend(v int64, size int, signed bool) int64 {
	if size >= 8 {
		return v
	}
	sh := uint(64 - 8*size)
	if signed {
		return v << sh >> sh
	}
	return int64(uint64(v) << sh >> sh)
}
