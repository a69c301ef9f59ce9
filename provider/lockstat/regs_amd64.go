package lockstat

// Offsets in x86-64's struct pt_regs of the first argument (rdi) and the
// return value (rax).
const (
	argReg0 = 112
	retReg  = 80
)
