//go:build !linux

package dtrace

// utsname is empty off Linux: -G's DOF has no utsname section.
func utsname() []byte { return nil }
