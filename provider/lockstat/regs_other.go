//go:build !amd64 && !arm64

package lockstat

// No register layout is known here: the lock reads as the first saved
// register.
const (
	argReg0 = 0
	retReg  = 0
)
