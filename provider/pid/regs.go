package pid

import (
	"runtime"
	"strconv"

	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/provider"
)

// Regs gives the offsets of registers in the struct pt_regs a uprobe
// program receives as context, for the running architecture.
type Regs struct {
	// Args are the integer argument registers of the calling convention.
	Args []int16
	// Ret is the return value register.
	Ret int16
	// SP and IP are the stack and instruction pointers.
	SP, IP int16
	// StackArg0 is the distance from SP at function entry to the first
	// argument passed on the stack (past the return address on x86-64).
	StackArg0 int16
	// Flags is the x86 flags register (eflags), which decides the
	// conditional jumps return probes may sit on; 0 elsewhere.
	Flags int16
	// ByName maps register names of the assembler (without %) to their
	// slot in pt_regs, for USDT argument specifications.
	ByName map[string]int16
}

// The x86-64 struct pt_regs, in order: r15 r14 r13 r12 bp bx r11 r10 r9 r8
// ax cx dx si di orig_ax ip cs flags sp ss.
var amd64 = Regs{
	Args:      []int16{112, 104, 96, 88, 72, 64},
	Ret:       80,
	SP:        152,
	IP:        128,
	StackArg0: 8,
	Flags:     144,
	ByName: map[string]int16{
		"r15": 0, "r14": 8, "r13": 16, "r12": 24, "rbp": 32, "rbx": 40,
		"r11": 48, "r10": 56, "r9": 64, "r8": 72, "rax": 80, "rcx": 88,
		"rdx": 96, "rsi": 104, "rdi": 112, "rip": 128, "rsp": 152,
	},
}

// The arm64 struct user_pt_regs: x0..x30, sp, pc, pstate.
var arm64 = Regs{
	Args:      []int16{0, 8, 16, 24, 32, 40, 48, 56},
	Ret:       0,
	SP:        248,
	IP:        256,
	StackArg0: 0,
	ByName:    map[string]int16{"sp": 248, "pc": 256},
}

func init() {
	for i := 0; i <= 30; i++ {
		arm64.ByName["x"+strconv.Itoa(i)] = int16(8 * i)
	}
}

// ArchRegs returns the register layout of the running architecture, or
// nil where user probes are not supported.
func ArchRegs() *Regs {
	switch runtime.GOARCH {
	case "amd64":
		return &amd64
	case "arm64":
		return &arm64
	}
	return nil
}

// CheckPID returns instructions that jump to provider.SkipLabel unless the
// firing thread belongs to process pid. They clobber R0-R5.
func CheckPID(pid int) asm.Instructions {
	return asm.Instructions{
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.JNE.Imm(asm.R0, int32(pid), provider.SkipLabel),
	}
}

// EntryArgs returns instructions that fill arg0..arg9 of the machine state
// from the argument registers and then from the stack, as a function sees
// them on entry. They clobber R0-R5 and R8.
func (r *Regs) EntryArgs(mstate int16) asm.Instructions {
	var insns asm.Instructions
	for i := 0; i < abi.MStateNArgs && i < len(r.Args); i++ {
		insns = append(insns,
			asm.LoadMem(asm.R0, asm.R6, r.Args[i], asm.DWord),
			asm.StoreMem(asm.R7, mstate+abi.MStateArgs+int16(8*i), asm.R0, asm.DWord))
	}
	if len(r.Args) >= abi.MStateNArgs {
		return insns
	}
	insns = append(insns, asm.LoadMem(asm.R8, asm.R6, r.SP, asm.DWord))
	for i := len(r.Args); i < abi.MStateNArgs; i++ {
		// bpf_probe_read_user zeroes the slot when the read faults.
		insns = append(insns,
			asm.Mov.Reg(asm.R1, asm.R7),
			asm.Add.Imm(asm.R1, int32(mstate+abi.MStateArgs+int16(8*i))),
			asm.Mov.Imm(asm.R2, 8),
			asm.Mov.Reg(asm.R3, asm.R8),
			asm.Add.Imm(asm.R3, int32(r.StackArg0+int16(8*(i-len(r.Args))))),
			asm.FnProbeReadUser.Call(),
		)
	}
	return insns
}

// Labels of takenCheck.
const (
	labelTaken = "dt_pid_taken"
	labelBase  = "dt_pid_cc"
)

// takenCheck follows the attach cookie's load into R0 (ReturnCookie): a
// return probe on a conditional jump (the condition code + 1 above the
// offset) fires only when the jump is taken, which the flags decide as
// the CPU will: condition code cc tests base condition cc>>1 (OF, CF,
// ZF, CF|ZF, SF, PF, SF^OF, ZF|(SF^OF)), negated when cc is odd. Not
// taken, it jumps to provider.SkipLabel. It clobbers R0-R5.
func (r *Regs) takenCheck() asm.Instructions {
	const cf, pf, zf, sf, of = 0, 2, 6, 7, 11
	bit := func(dst asm.Register, b int32) asm.Instructions {
		return asm.Instructions{asm.Mov.Reg(dst, asm.R4), asm.RSh.Imm(dst, b)}
	}
	insns := asm.Instructions{
		asm.RSh.Imm(asm.R0, abi.CookieCondShift),
		asm.JEq.Imm(asm.R0, 0, labelTaken),
		asm.Sub.Imm(asm.R0, 1),
		asm.LoadMem(asm.R4, asm.R6, r.Flags, asm.DWord),
		asm.Mov.Reg(asm.R5, asm.R0),
		asm.RSh.Imm(asm.R5, 1),
	}
	for b := int32(0); b < 8; b++ {
		insns = append(insns, asm.JEq.Imm(asm.R5, b, labelBase+strconv.Itoa(int(b))))
	}
	insns = append(insns, asm.Ja.Label(provider.SkipLabel))
	// Each base condition leaves its value in bit 0 of R2.
	bases := [8]asm.Instructions{
		bit(asm.R2, of),
		bit(asm.R2, cf),
		bit(asm.R2, zf),
		append(bit(asm.R2, zf), asm.Or.Reg(asm.R2, asm.R4)),
		bit(asm.R2, sf),
		bit(asm.R2, pf),
		append(bit(asm.R2, sf), append(bit(asm.R3, of), asm.Xor.Reg(asm.R2, asm.R3))...),
		append(bit(asm.R2, sf), append(bit(asm.R3, of), asm.Xor.Reg(asm.R2, asm.R3),
			asm.Mov.Reg(asm.R3, asm.R4), asm.RSh.Imm(asm.R3, zf), asm.Or.Reg(asm.R2, asm.R3))...),
	}
	const decide = "dt_pid_decide"
	for b, code := range bases {
		code[0] = code[0].WithSymbol(labelBase + strconv.Itoa(b))
		insns = append(insns, code...)
		insns = append(insns, asm.Ja.Label(decide))
	}
	return append(insns,
		asm.Mov.Reg(asm.R3, asm.R0).WithSymbol(decide),
		asm.Xor.Reg(asm.R2, asm.R3), // odd condition codes negate
		asm.And.Imm(asm.R2, 1),
		asm.JEq.Imm(asm.R2, 0, provider.SkipLabel),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(labelTaken),
	)
}

// ReturnCookie is the attach cookie of a return probe's site: the offset
// and Exit.Cond above the probe id's bits (abi.CookieOffShift,
// abi.CookieCondShift), which AttachShared fills.
func ReturnCookie(e Exit) uint64 {
	return e.Off<<abi.CookieOffShift | uint64(e.Cond)<<abi.CookieCondShift
}

// ReturnArgs returns instructions that set arg0 to the offset of the
// returning instruction in its function, arg1 to the return value and the
// other arguments to 0. With atReturn the uprobe is on that instruction
// and its attach cookie holds the offset (ReturnCookie); otherwise it is
// a uretprobe, which does not know the offset, and arg0 is 0. cookie
// leaves the cookie in R0 (nil: bpf_get_attach_cookie; see
// provider.CookieReader). They clobber R0-R5.
func (r *Regs) ReturnArgs(mstate int16, atReturn bool, cookie asm.Instructions) asm.Instructions {
	insns := asm.Instructions{provider.StoreImmDW(asm.R7, mstate+abi.MStateArgs, 0)}
	if atReturn {
		if cookie == nil {
			cookie = asm.Instructions{asm.Mov.Reg(asm.R1, asm.R6), asm.FnGetAttachCookie.Call()}
		}
		insns = append(append(cookie[:len(cookie):len(cookie)],
			asm.Mov.Reg(asm.R2, asm.R0),
			asm.LSh.Imm(asm.R2, 64-abi.CookieCondShift),
			asm.RSh.Imm(asm.R2, 64-abi.CookieOffBits),
			asm.StoreMem(asm.R7, mstate+abi.MStateArgs, asm.R2, asm.DWord),
		), r.takenCheck()...)
	}
	insns = append(insns,
		asm.LoadMem(asm.R0, asm.R6, r.Ret, asm.DWord),
		asm.StoreMem(asm.R7, mstate+abi.MStateArgs+8, asm.R0, asm.DWord),
	)
	for i := 2; i < abi.MStateNArgs; i++ {
		insns = append(insns, provider.StoreImmDW(asm.R7, mstate+abi.MStateArgs+int16(8*i), 0))
	}
	return insns
}
