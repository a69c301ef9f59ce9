//go:build !linux

package kernel

import "errors"

var errNotLinux = errors.New("DTrace for Linux needs Linux")

// CheckPrivileges fails: there is no BPF here.
func CheckPrivileges() error { return errNotLinux }

// PossibleCPUs fails off Linux.
func PossibleCPUs() ([]int, error) { return nil, errNotLinux }

// OnlineCPUs fails off Linux.
func OnlineCPUs() ([]int, error) { return nil, errNotLinux }

// MountTracefs fails off Linux.
func MountTracefs() (string, error) { return "", errNotLinux }

// SetLockMem fails off Linux.
func SetLockMem(int64) error { return errNotLinux }
