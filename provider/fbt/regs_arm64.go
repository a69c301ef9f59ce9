package fbt

// Offsets in arm64's struct pt_regs of x0-x7 (the first eight arguments;
// x0 also the return value) and of sp.
var argRegs = []int16{0, 8, 16, 24, 32, 40, 48, 56}

const (
	retReg = 0
	spReg  = 248
	// stackArgSlot: the ninth argument is at the stack pointer on entry.
	stackArgSlot = 0
)

// endbrSize is 0: kprobe.multi links are given names here, not the
// function tracer's addresses (see the amd64 file), whose relation to
// what the kernel looks cookies up by is not known here.
const endbrSize = 0
