// Command dtrace is DTrace for Linux: it compiles D programs to eBPF,
// enables their probes and prints what they record, as dtrace(1M) does.
package main

import "os"

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
