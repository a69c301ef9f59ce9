// Package excmd reads the command line the example programs share,
//
//	name [-top N] command [arg ...]
//
// and reports their errors the same way.
package excmd

import (
	"flag"
	"fmt"
	"os"
)

// CountCalls is the D clause both examples trace with: it counts the
// target's system calls by name in @calls.
const CountCalls = "syscall:::entry /pid == $target/ { @calls[probefunc] = count(); }\n"

// Args parses the command line of the example called name: how many
// system calls to print (-top, 10 by default) and the command to run. A
// missing command or a -top below 1 prints the usage and exits 2.
func Args(name string) (top int, argv []string) {
	n := flag.Int("top", 10, "how many system calls to print")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: %s [-top N] command [arg ...]\n", name)
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 || *n <= 0 {
		flag.Usage()
		os.Exit(2)
	}
	return *n, flag.Args()
}

// Check prints "name: err" and exits 1 if err is not nil.
func Check(name string, err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
