//go:build linux && !amd64

package dtrace

import "errors"

// haveBreakpoints: evaltime's holds past exec are not implemented here
// (without the option a process is held at exec).
const haveBreakpoints = false

var errNoBreakpoints = errors.New("evaltime other than exec is not supported on this architecture")

func ptracePC(pid int) (uint64, error) { return 0, errNoBreakpoints }

func breakpoint(code []byte) []byte { return code }

func atBreakpoint(pid int, addr uint64) (bool, error) { return false, errNoBreakpoints }

func ptraceArg0(pid int) (uint64, error) { return 0, errNoBreakpoints }
