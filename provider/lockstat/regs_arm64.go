package lockstat

// Offsets in arm64's struct pt_regs of x0: the first argument and the
// return value.
const (
	argReg0 = 0
	retReg  = 0
)
