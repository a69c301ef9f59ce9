//go:build !amd64

package syscall

// sysnums is empty where we do not know the system call numbers and the
// layout of struct pt_regs: every probe then uses its own tracepoint.
func sysnums() map[string]int32 { return nil }

// Unused without sysnums.
const (
	regsArgs   = 0
	regsOrigAX = 0
	regsBlock  = 0
)

var argSlots [6]int16
