// Command syscount is a small program that embeds the dtrace library:
// it runs a command and counts the system calls it makes by name,
// printing the most frequent ones when the command exits (or on ^C).
//
//	syscount [-top N] command [arg ...]
//
// The command's output goes to standard error, leaving standard output
// to the counts. It needs root, as tracing does.
package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/dtrace-go/dtrace/dtrace"
	"github.com/dtrace-go/dtrace/examples/internal/excmd"
)

// program counts the target's system calls; END keeps the top ones,
// which the library prints when tracing ends.
const program = excmd.CountCalls + `END { trunc(@calls, %d); }
`

func main() {
	top, argv := excmd.Args("syscount")
	excmd.Check("syscount", syscount(argv, top, os.Stdout))
}

// syscount traces the command argv, writing the counts to w.
func syscount(argv []string, top int, w io.Writer) error {
	// The command starts stopped; Run lets it go once probes are on.
	proc, err := dtrace.CreateProcess(argv, os.Stdin, os.Stderr, os.Stderr)
	if err != nil {
		return err
	}
	defer proc.Abandon()

	opts := dtrace.NewOptions()
	if err := opts.Set("quiet", ""); err != nil {
		return err
	}
	h, err := dtrace.Open(opts, dtrace.Config{Target: proc.Pid()})
	if err != nil {
		return err
	}
	defer h.Close()
	if _, err := h.Compile(dtrace.Source{Name: "syscount", Text: fmt.Sprintf(program, top)}); err != nil {
		return err
	}
	if err := h.Go(); err != nil {
		return err
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	// Run stops tracing when the command exits, then prints @calls.
	_, err = h.Run(w, dtrace.RunConfig{Interrupt: sigs, Processes: []*dtrace.Process{proc}})
	return err
}
