//go:build !linux

// Command dtbench measures our dtrace side by side with bpftrace; it runs
// on Linux only. See bench/README.md.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "dtbench: Linux only")
	os.Exit(1)
}
