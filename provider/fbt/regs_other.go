//go:build !amd64 && !arm64

package fbt

// No register layout is known here: arguments read as 0.
var argRegs []int16

const (
	retReg       = 0
	spReg        = 0
	stackArgSlot = 0
)
