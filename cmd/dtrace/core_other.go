//go:build !linux

package main

import (
	"fmt"
	"io"
)

// dumpCore says that -x core is Linux-only here.
func dumpCore(stderr io.Writer) {
	fmt.Fprintln(stderr, "dtrace: -x core is not supported on this system")
}
