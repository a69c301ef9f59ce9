// Command dtrace is DTrace for Linux: it compiles D programs to eBPF,
// enables their probes and prints what they record, as dtrace(1M) does.
package main

import (
	"os"
	"runtime"
)

// BEGIN and END run in the thread that fires them; keeping main on the
// process's first thread makes that thread's tid the pid, as in
// dtrace(1M), so curthread->pid == pid there.
func init() { runtime.LockOSThread() }

func main() {
	status := run(os.Args, os.Stdin, os.Stdout, os.Stderr)
	if wantCore {
		dumpCore(os.Stderr)
	}
	os.Exit(status)
}

// wantCore is set by run when the core option was given: dtrace then
// ends with a core dump of itself, as dtrace-utils does, for debugging.
var wantCore bool
