//go:build !amd64 && !arm64

package fbt

// No register layout is known here: arguments read as 0.
var argRegs []int16

const (
	retReg       = 0
	spReg        = 0
	stackArgSlot = 0
)

// endbrSize is 0: kprobe.multi links are given names here, not the
// function tracer's addresses (see the amd64 file), whose relation to
// what the kernel looks cookies up by is not known here.
const endbrSize = 0
