//go:build !linux

package agent

import "syscall"

// waitReadable is only for Linux; elsewhere the reads wait in Go's
// poller.
func waitReadable(syscall.RawConn, int) {}
