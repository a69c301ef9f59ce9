//go:build !amd64

package syscall

// sysnums is empty where we do not know the system call numbers and the
// layout of struct pt_regs: every probe then uses its own tracepoint.
func sysnums() map[string]int32 { return nil }

// sysnums32 is empty too: no compat system calls are known.
func sysnums32() map[string]int32 { return nil }

// Unused without sysnums.
const (
	regsArgs      = 0
	regsOrigAX    = 0
	regsBlock     = 0
	regsArgs32    = 0
	regsBlock32   = 0
	regsBP        = 0
	tsCompat      = 0
	tsCompatShift = 0
)

var (
	argSlots   [6]int16
	argSlots32 [5]int16
)
